"""A sandbox backend: how one command is started confined by a ``SandboxPolicy``."""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from hermes.environments.sandbox.policy import SandboxPolicy


class Backend(ABC):
    """Confines commands with one operating-system mechanism."""

    name: str
    private_tmp = False
    """Whether commands can be shown a directory of the session's own as /tmp."""

    @abstractmethod
    def problem(self) -> str | None:
        """Why this backend cannot confine commands here, or None when it can.
        Called once per runtime (it may start a process to find out)."""

    @abstractmethod
    def popen(self, argv: Sequence[str], policy: SandboxPolicy,
              **options: Any) -> subprocess.Popen[bytes]:
        """Start ``argv`` confined by ``policy`` (``options`` as for ``Popen``)."""

    def setup_failed(self, exit_code: int, output: str) -> bool:
        """Whether a command's result is the backend failing before the command ran."""
        return False

    def limits(self, policy: SandboxPolicy) -> list[str]:
        """What this backend leaves open or does differently (``sandbox explain``)."""
        return []

    def reach(self, policy: SandboxPolicy) -> dict[str, str]:
        """What a command holds and can reach besides files (``sandbox explain``):
        ``capabilities`` and ``sockets``."""
        return {}

    def close(self) -> None:
        """Release what was kept between commands."""
