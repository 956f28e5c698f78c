"""Execution environments: where tools run commands (local, docker, ssh)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    output: str
    timed_out: bool = False


class Environment(ABC):
    """Runs shell commands for tools. ``start``/``stop`` default to no-ops."""

    kind: str

    def start(self) -> None:
        """Acquire what the environment needs (connections, containers)."""

    def stop(self) -> None:
        """Release it again."""

    @abstractmethod
    def run(self, command: str, *, timeout: float | None = None) -> CommandResult:
        """Run ``command`` in a shell and return its combined output."""


def open_environment(environment: Environment) -> Iterator[Environment]:
    """Resource: start the selected environment for the runtime's lifetime."""
    environment.start()
    try:
        yield environment
    finally:
        environment.stop()
