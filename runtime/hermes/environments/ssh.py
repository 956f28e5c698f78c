"""Run commands on a remote host through the system ``ssh`` client."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable

from hermes.config.schema import SSHSettings
from hermes.environments.base import CommandResult, Environment
from hermes.errors import SandboxError
from hermes.home import Home


class SSHEnvironment(Environment):
    kind = "ssh"

    def __init__(self, home: Home, settings: SSHSettings, cwd: str | None, timeout: float,
                 environ: dict[str, str]):
        if not settings.host:
            raise SandboxError("environment.ssh.host is not set")
        self.home = home
        self.settings = settings
        self.cwd = cwd
        self.timeout = timeout
        self.environ = environ

    def _argv(self, command: str) -> list[str]:
        s = self.settings
        target = f"{s.user}@{s.host}" if s.user else str(s.host)
        argv = ["ssh", "-p", str(s.port), "-o", "BatchMode=yes"]
        if s.key_file:
            argv += ["-i", s.key_file]
        remote = f"cd {shlex.quote(self.cwd)} && {command}" if self.cwd else command
        return [*argv, target, remote]

    def run(self, command: str, *, timeout: float | None = None,
            cancelled: Callable[[], bool] | None = None) -> CommandResult:
        try:
            done = subprocess.run(self._argv(command), env=self.home.child_env(self.environ),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout or self.timeout,
                                  check=False)
        except subprocess.TimeoutExpired as exc:
            output = exc.output.decode(errors="replace") if exc.output else ""
            return CommandResult(124, output, timed_out=True)
        except FileNotFoundError as exc:
            raise SandboxError("the ssh client is not installed") from exc
        return CommandResult(done.returncode, done.stdout.decode(errors="replace"))
