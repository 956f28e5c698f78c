"""Execution environments: where tools run commands (local, docker, ssh)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hermes.environments.files import Files
from hermes.errors import SandboxError


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    output: str
    timed_out: bool = False
    cancelled: bool = False
    """Stopped because the user interrupted the turn."""


class BackgroundProcess(ABC):
    """A command started with ``Environment.spawn``; its combined output goes to a log file."""

    pid: int
    log_path: Path

    @abstractmethod
    def poll(self) -> int | None:
        """The exit code, or None while it still runs."""

    @abstractmethod
    def wait(self, timeout: float | None) -> int | None:
        """Wait up to ``timeout`` seconds; the exit code, or None if it still runs."""

    @abstractmethod
    def kill(self) -> None:
        """Stop the process and everything it started; a no-op once it has exited."""


class Environment(ABC):
    """Runs shell commands for tools. ``start``/``stop`` default to no-ops."""

    kind: str
    approvals_required = True
    """Whether dangerous commands need approval here (a docker sandbox may waive it)."""

    def start(self) -> None:
        """Acquire what the environment needs (connections, containers)."""

    def stop(self) -> None:
        """Release it again."""

    def attach(self, session_id: str) -> None:
        """A session starts using this environment (a sandbox records it in its labels)."""

    def session(self, session_id: str, results: Path | None = None) -> Environment:
        """This environment for one session's tools (a local sandbox gives each session
        its own /tmp; its file tools may read back ``results``, the session's spilled
        tool results)."""
        return self

    def at(self, cwd: Path) -> Environment:
        """This environment with commands starting in ``cwd``, a session's own working
        directory (an editor's project). Only a local environment's directories are this
        machine's; the others stay where they are."""
        return self

    @abstractmethod
    def run(self, command: str, *, timeout: float | None = None,
            cancelled: Callable[[], bool] | None = None) -> CommandResult:
        """Run ``command`` in a shell and return its combined output.

        ``cancelled`` is polled while it runs; when it turns true the command is
        stopped (environments that cannot stop it may finish it first)."""

    def notice(self) -> str | None:
        """Something the model is told once per session about where commands run (a
        local sandbox that could not confine them)."""
        return None

    def failure_note(self, result: CommandResult) -> str | None:
        """For a failed command: what in this environment refused it and how to widen it."""
        return None

    def files(self) -> Files:
        """File access where the commands run (the file tools act through it)."""
        raise SandboxError(f"the {self.kind} environment has no file access")

    def spawn(self, command: str, *, log_path: Path) -> BackgroundProcess:
        """Start ``command`` in the background, writing its output to ``log_path``.

        Environments that cannot do this keep the default, which says so.
        """
        raise SandboxError(f"the {self.kind} environment cannot run background processes")


def open_environment(environment: Environment) -> Iterator[Environment]:
    """Resource: start the selected environment for the runtime's lifetime."""
    environment.start()
    try:
        yield environment
    finally:
        environment.stop()
