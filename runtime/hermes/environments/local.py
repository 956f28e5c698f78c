"""Run commands on this machine, with the profile's ``HERMES_HOME`` passed explicitly,
confined by the profile's sandbox (``environment.local.sandbox``, see ``sandbox/``)."""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hermes.config.schema import SandboxSettings
from hermes.credentials import Secrets, command_environment
from hermes.environments.base import BackgroundProcess, CommandResult, Environment
from hermes.environments.files import Files, LocalFiles
from hermes.environments.sandbox import Sandbox
from hermes.fsutil import private_dir
from hermes.home import Home

# After a kill, how long to wait for the pipes to close before giving up on them.
DRAIN_SECONDS = 2.0


def _kill_group(process: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Signal the process group: a shell's children must die with it, or they
    keep the output pipe open and the caller hangs past its timeout."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


class LocalProcess(BackgroundProcess):
    """A background command in its own session (so it can be killed as a group)."""

    def __init__(self, process: subprocess.Popen[bytes], log_path: Path):
        self._process = process
        self.pid = process.pid
        self.log_path = log_path

    def poll(self) -> int | None:
        return self._process.poll()

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        # The group may outlive its leader (``cmd &``), so signal it even after exit.
        _kill_group(self._process, signal.SIGTERM)
        if self.wait(1.0) is None:
            _kill_group(self._process)
            self.wait(DRAIN_SECONDS)
        else:
            _kill_group(self._process)


CANCEL_POLL = 0.1
"""Seconds between checks for an interrupt while a command runs."""
SETUP_ATTEMPTS = 3
"""A sandbox that failed to set up (the command never ran) is tried again this often."""


class LocalEnvironment(Environment):
    kind = "local"

    def __init__(self, home: Home, cwd: str | None, timeout: float, environ: dict[str, str],
                 sandbox: SandboxSettings | None = None, secrets: Secrets | None = None,
                 env_passthrough: Sequence[str] = ()):
        self.home = home
        self.cwd = Path(cwd).expanduser() if cwd else None
        self.timeout = timeout
        self.environ = environ
        secrets = secrets or Secrets(home.env_file, environ)
        self.sandbox = Sandbox(home, sandbox or SandboxSettings(), environ,
                               secret_files=list(secrets.origin.values()))
        self.command_environ = home.child_env(
            command_environment(environ, secrets, env_passthrough))
        """What commands see: the runtime's environment without its secrets."""
        self.session_id: str | None = None
        """The session whose commands these are (its /tmp); None: of no session."""
        self.results: Path | None = None
        """The session's spilled tool results, which its file tools may read back."""

    def stop(self) -> None:
        self.sandbox.close()

    def at(self, cwd: Path) -> Environment:
        moved = copy.copy(self)  # shares the sandbox: it is the runtime's, closed once
        moved.cwd = cwd
        return moved

    def session(self, session_id: str, results: Path | None = None) -> Environment:
        bound = copy.copy(self)
        bound.session_id = session_id
        bound.results = results
        return bound

    def notice(self) -> str | None:
        return self.sandbox.notice()

    def failure_note(self, result: CommandResult) -> str | None:
        return self.sandbox.failure_note(result.exit_code, result.output,
                                         self.cwd or Path.cwd())

    def _start(self, command: str, stdout: Any) -> subprocess.Popen[bytes]:
        # A session of its own: a timeout or an interrupt kills the whole group.
        return self.sandbox.popen(
            ["/bin/sh", "-c", command], self.cwd or Path.cwd(), self.session_id,
            env=self.command_environ, stdout=stdout, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)

    def run(self, command: str, *, timeout: float | None = None,
            cancelled: Callable[[], bool] | None = None) -> CommandResult:
        for _ in range(SETUP_ATTEMPTS):
            result = self._run(command, timeout, cancelled)
            if not self.sandbox.setup_failed(result.exit_code, result.output):
                break
        return result

    def _run(self, command: str, timeout: float | None,
             cancelled: Callable[[], bool] | None) -> CommandResult:
        process = self._start(command, subprocess.PIPE)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            try:  # wait in slices when someone may cancel; communicate() resumes cleanly
                output, _ = process.communicate(
                    timeout=max(0.0, min(remaining, CANCEL_POLL) if cancelled else remaining))
                return CommandResult(process.returncode, output.decode(errors="replace"))
            except subprocess.TimeoutExpired:
                if cancelled is not None and cancelled():
                    _kill_group(process)
                    return CommandResult(130, self._drain(process), cancelled=True)
                if time.monotonic() >= deadline:
                    _kill_group(process)
                    return CommandResult(124, self._drain(process), timed_out=True)

    @staticmethod
    def _drain(process: subprocess.Popen[bytes]) -> str:
        """Partial output of a killed command; bounded even if a grandchild escaped the group."""
        try:
            output, _ = process.communicate(timeout=DRAIN_SECONDS)
        except subprocess.TimeoutExpired:
            if process.stdout is not None:
                process.stdout.close()
            process.wait()
            return ""
        return output.decode(errors="replace") if output else ""

    def files(self) -> Files:
        cwd = self.cwd or Path.cwd()
        access = self.sandbox.file_access(cwd, self.session_id, self.results)
        return LocalFiles(str(cwd), str(access.user_home), access)

    def spawn(self, command: str, *, log_path: Path) -> BackgroundProcess:
        private_dir(log_path.parent)
        with open(log_path, "wb") as log:
            process = self._start(command, log)
        return LocalProcess(process, log_path)
