"""What the current profile's commands can read, write and reach (``hermes sandbox
explain``, ``hermes doctor``), from the same policy and backend that confine them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes.environments.sandbox.policy import SETTING
from hermes.environments.sandbox.service import INSTALL_HINT, Sandbox
from hermes.errors import SandboxUnavailable
from hermes.hints import command
from hermes.home import Home

TMP = {"bubblewrap": "private to each command: empty at its start, discarded after",
       "landlock": "the machine's own /tmp"}


def describe(sandbox: Sandbox, cwd: Path) -> dict[str, Any]:
    """The confinement of a command run now in ``cwd``, as plain data."""
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
        "hidden": [{"path": str(entry.path), "why": entry.why,
                    "exists": entry.path in policy.existing_hidden()} for entry in policy.hidden],
        "writable": writable, "network": "on" if policy.network else "off",
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
              for item in found["hidden"]]
    lines.append("write: " + ("only in" if found["writable"] else "nowhere"))
    lines += [f"  {item['path']}  ({item['why']})" for item in found["writable"]]
    lines.append(f"network: {found['network']}")
    lines += [f"note: {limit}" for limit in found["limits"]]
    widen = command(profile, f"config set {SETTING}.allow_write '[~/.cache/pip]'")
    lines.append(f"widen: {widen} (or {SETTING}.network on, {SETTING}.mode off)")
    return lines


def explain_profile(home: Home, environ: Mapping[str, str], overrides: list[str]
                    ) -> dict[str, Any]:
    """``describe`` for ``home``'s composed config (with ``overrides``), run from here."""
    from hermes.config import compose_config

    environment = compose_config(home, environ, overrides).config.environment
    cwd = Path(environment.cwd).expanduser() if environment.cwd else Path.cwd()
    if environment.kind != "local":
        return {"mode": environment.local.sandbox.mode, "backend": "none", "confined": False,
                "cwd": str(cwd), "why": f"environment is {environment.kind}",
                "problem": f"commands run in the {environment.kind} environment, not on this "
                           f"machine; {SETTING} applies to environment=local"}
    return describe(Sandbox(home, environment.local.sandbox, environ), cwd)
