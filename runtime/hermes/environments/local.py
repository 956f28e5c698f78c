"""Run commands on this machine, with the profile's ``HERMES_HOME`` passed explicitly."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hermes.environments.base import CommandResult, Environment
from hermes.home import Home


class LocalEnvironment(Environment):
    kind = "local"

    def __init__(self, home: Home, cwd: str | None, timeout: float, environ: dict[str, str]):
        self.home = home
        self.cwd = Path(cwd).expanduser() if cwd else None
        self.timeout = timeout
        self.environ = environ

    def run(self, command: str, *, timeout: float | None = None) -> CommandResult:
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", command], cwd=self.cwd, env=self.home.child_env(self.environ),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                timeout=timeout or self.timeout, check=False,
            )
        except subprocess.TimeoutExpired as exc:
            output = exc.output.decode(errors="replace") if exc.output else ""
            return CommandResult(124, output, timed_out=True)
        return CommandResult(done.returncode, done.stdout.decode(errors="replace"))
