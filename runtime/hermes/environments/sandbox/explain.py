"""What the current profile's commands can read, write and reach (``hermes sandbox
explain``, ``hermes doctor``), from the same policy and backend that confine them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes.credentials import Secrets, command_environment
from hermes.environments.sandbox.policy import SETTING
from hermes.environments.sandbox.service import INSTALL_HINT, Sandbox
from hermes.errors import SandboxUnavailable
from hermes.hints import command
from hermes.home import Home

TMP = {"bubblewrap": "private to each session: a directory of its own that the file "
                     "tools see as /tmp too",
       "landlock": "the machine's own /tmp"}


def describe(sandbox: Sandbox, cwd: Path,
             environment: Mapping[str, list[str]] | None = None) -> dict[str, Any]:
    """The confinement of a command run now in ``cwd``, as plain data; ``environment``:
    the names withheld from commands and those passed through anyway."""
    choice = sandbox.choice()
    settings = sandbox.settings
    found: dict[str, Any] = {"mode": settings.mode, "backend": choice.name,
                             "why": choice.error or choice.detail, "cwd": str(cwd),
                             "confined": choice.backend is not None}
    if choice.backend is None:
        fix = "" if settings.mode == "off" else f"; {INSTALL_HINT}"
        return found | {"problem": (choice.error or f"commands run unconfined: {choice.detail}"
                                    f"{fix}") if settings.mode != "off" else None}
    try:
        policy = sandbox.policy(cwd)
    except SandboxUnavailable as exc:
        return found | {"problem": str(exc)}
    writable = [{"path": str(path), "why": "the working directory" if index == 0 else
                 f"{SETTING}.allow_write"} for index, path in enumerate(policy.writable)]
    if settings.mode == "workspace-write" or choice.name == "bubblewrap":
        writable.append({"path": "/tmp", "why": TMP[choice.name]})
    return found | {
        "problem": None,
        "hidden": [{"path": str(entry.path), "why": entry.why, "hermes": entry.hermes,
                    "exists": entry.path in policy.existing_hidden()} for entry in policy.hidden],
        "writable": writable, "read_only": [str(path) for path in policy.protected],
        "network": "on" if policy.network else "off", **choice.backend.reach(policy),
        "environment": dict(environment or {"withheld": [], "passthrough": []}),
        "limits": choice.backend.limits(policy)}


def render(found: dict[str, Any], profile: str | None = None) -> list[str]:
    """``describe``'s result as the lines ``hermes sandbox explain`` prints for
    ``profile`` (its widening hint carries ``-p``)."""
    lines = [f"mode {found['mode']}, backend {found['backend']}: {found['why']}",
             f"working directory {found['cwd']}"]
    if found.get("problem"):
        return [*lines, f"problem: {found['problem']}"]
    if not found["confined"]:
        return [*lines, "commands run unconfined: they can read, write and reach whatever "
                "you can"]
    lines.append("read: everything except")
    lines += [f"  {item['path']}  ({item['why']}{'' if item['exists'] else ', absent now'})"
              for item in found["hidden"] if item["exists"] or item["hermes"]]
    absent = [item["path"] for item in found["hidden"] if not item["exists"]
              and not item["hermes"]]
    if absent:
        lines.append(f"  and, should they appear: {', '.join(absent)}")
    lines.append("write: " + ("only in" if found["writable"] else "nowhere"))
    lines += [f"  {item['path']}  ({item['why']})" for item in found["writable"]]
    if found["read_only"]:
        shown = ", ".join(found["read_only"][:3])
        more = len(found["read_only"]) - 3
        lines.append(f"  but never the start-up files {shown}" + (
            f" and {more} more (`--json` lists them)" if more > 0 else ""))
    lines.append("file tools: the same rules (and never the Hermes root, in any mode)")
    lines.append(f"network: {found['network']}; {found['sockets']}")
    lines.append(f"capabilities: {found['capabilities']}")
    withheld = found["environment"]
    lines.append("environment: " + (
        f"withheld from commands: {', '.join(withheld['withheld'])}" if withheld["withheld"]
        else "no secret in it to withhold") + (
        f"; passed through: {', '.join(withheld['passthrough'])}"
        if withheld["passthrough"] else ""))
    lines += [f"note: {limit}" for limit in found["limits"]]
    widen = command(profile, f"config set {SETTING}.allow_write '[~/.cache/pip]'")
    lines.append(f"widen: {widen} (or {SETTING}.network on, {SETTING}.mode off)")
    return lines


def explain_profile(home: Home, environ: Mapping[str, str], overrides: list[str]
                    ) -> dict[str, Any]:
    """``describe`` for ``home``'s composed config (with ``overrides``), run from here."""
    from hermes.config import compose_config

    return explain_config(home, environ, compose_config(home, environ, overrides).config)


def explain_config(home: Home, environ: Mapping[str, str], config: Any) -> dict[str, Any]:
    """``describe`` for ``home`` with the composed ``config`` (a ``HermesConfig``)."""
    environment = config.environment
    cwd = Path(environment.cwd).expanduser() if environment.cwd else Path.cwd()
    if environment.kind != "local":
        return {"mode": environment.local.sandbox.mode, "backend": "none", "confined": False,
                "cwd": str(cwd), "why": f"environment is {environment.kind}",
                "problem": f"commands run in the {environment.kind} environment, not on this "
                           f"machine; {SETTING} applies to environment=local"}
    secrets = Secrets(home.env_file, environ, precedence=config.secrets.precedence,
                      environment_files=config.secrets.environment_files)
    sandbox = Sandbox(home, environment.local.sandbox, environ,
                      secret_files=list(secrets.origin.values()))
    passthrough = environment.local.env_passthrough
    kept = command_environment(environ, secrets, passthrough)
    return describe(sandbox, cwd, {"withheld": sorted(set(environ) - set(kept)),
                                   "passthrough": sorted(set(passthrough) & set(environ))})
