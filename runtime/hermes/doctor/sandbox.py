"""Which sandbox confines the profile's local commands, and how to get one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes.doctor.base import Check, Status
from hermes.home import Home

INSTALL = "apt install bubblewrap (NixOS: add pkgs.bubblewrap to the system packages)"


def check_workspace(env: Any, environ: Mapping[str, str]) -> list[Check]:
    """A warning when the working directory is the user's home."""
    from hermes.environments.sandbox.policy import home_workspace_note

    cwd = Path(env.cwd).expanduser() if env.cwd else Path.cwd()
    note = home_workspace_note(cwd, environ)
    return [Check("working directory", "warn", note, "hermes config set environment.cwd "
                  "~/projects/NAME")] if note else []


def check_sandbox(home: Home, environ: Mapping[str, str], config: Any) -> list[Check]:
    """Which sandbox confines the commands and what they hold; what the environment
    withholds from them; where the hidden paths are mounted again."""
    from hermes.environments.sandbox.explain import explain_config

    settings = config.environment.local.sandbox
    if settings.mode == "off":
        return [Check("sandbox", "warn", "off (environment.local.sandbox.mode): commands run "
                      "with your full rights", "hermes config set environment.local.sandbox."
                      "mode workspace-write")]
    found = explain_config(home, environ, config)
    if found.get("problem"):
        status: Status = "warn" if not found["confined"] and "unconfined" in found[
            "problem"] else "fail"
        return [Check("sandbox", status, found["problem"], INSTALL)]
    checks = [Check("sandbox", "ok", f"{found['why']}: {settings.mode}, network "
                    f"{settings.network}; capabilities: {found['capabilities']}; sockets: "
                    f"{found['sockets']} (`hermes sandbox explain` for details)")]
    withheld = found["environment"]
    if withheld["withheld"] or withheld["passthrough"]:
        passed = (f"; passed through (environment.local.env_passthrough): "
                  f"{', '.join(withheld['passthrough'])}" if withheld["passthrough"] else "")
        checks.append(Check("command environment", "ok", f"withheld from commands: "
                            f"{', '.join(withheld['withheld']) or 'nothing'}{passed}"))
    aliases = [item["path"] for item in found["hidden"] if "mounted again" in item["why"]]
    if aliases:
        checks.append(Check("mount aliases", "ok", f"hidden paths are reachable through "
                            f"other mounts too, and hidden there as well: {', '.join(aliases)}"))
    return checks
