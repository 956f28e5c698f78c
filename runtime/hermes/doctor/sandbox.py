"""Which sandbox confines the profile's local commands, and how to get one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes.config.schema import SandboxSettings
from hermes.doctor.base import Check
from hermes.home import Home

INSTALL = "apt install bubblewrap (NixOS: add pkgs.bubblewrap to the system packages)"


def check_workspace(env: Any, environ: Mapping[str, str]) -> list[Check]:
    """A warning when the working directory is the user's home."""
    from hermes.environments.sandbox.policy import home_workspace_note

    cwd = Path(env.cwd).expanduser() if env.cwd else Path.cwd()
    note = home_workspace_note(cwd, environ)
    return [Check("working directory", "warn", note, "hermes config set environment.cwd "
                  "~/projects/NAME")] if note else []


def check_sandbox(home: Home, environ: Mapping[str, str], settings: SandboxSettings) -> Check:
    from hermes.environments.sandbox import Sandbox

    choice = Sandbox(home, settings, environ).choice()
    if settings.mode == "off":
        return Check("sandbox", "warn", "off (environment.local.sandbox.mode): commands run "
                     "with your full rights", "hermes config set environment.local.sandbox."
                     "mode workspace-write")
    if choice.error:
        return Check("sandbox", "fail", choice.error, INSTALL)
    if choice.backend is None:
        return Check("sandbox", "warn", f"commands run unconfined: {choice.detail}", INSTALL)
    return Check("sandbox", "ok", f"{choice.detail}: {settings.mode}, network "
                 f"{settings.network} (`hermes sandbox explain` for details)")
