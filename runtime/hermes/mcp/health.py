"""How each MCP server fared when it was last started, and when a failed one is tried
again: a server that failed to start is not started again before its retry time, which
doubles with each failure (from ``FIRST_RETRY`` up to ``LAST_RETRY``), so one server
that never answers does not add its ``connect_timeout`` to every command the warm server
runs. The warm server's broker keeps the record in ``run/mcp-health.json`` for ``hermes
mcp list`` and ``hermes doctor``, which read it without the SDK.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write

FIRST_RETRY = 30.0
"""Seconds after a first failure before the server is tried again."""
LAST_RETRY = 900.0
"""The longest wait between two tries."""
HEALTH_FILE = "mcp-health.json"


@dataclass
class Health:
    """One server's record (by name)."""

    state: str
    """``running`` or ``failing``."""
    error: str | None = None
    """What the last failed start said (one line)."""
    stderr: list[str] = field(default_factory=list)
    """The last lines of its stderr at that failure."""
    failures: int = 0
    """Failed starts in a row."""
    checked_at: float = 0.0
    """When it was last started or tried (epoch seconds)."""
    next_retry: float = 0.0
    """Epoch seconds before which a failing server is not tried again."""
    task_only: list[str] = field(default_factory=list)
    """Tools of a running server that run only as MCP tasks: not offered to the model."""

    def retry_in(self, now: float | None = None) -> float:
        """Seconds until the next try (0: it may be tried now)."""
        return max(0.0, self.next_retry - (time.time() if now is None else now))

    def describe(self, now: float | None = None) -> str:
        """One line: ``failing since …: error; next retry in N s``."""
        if self.state != "failing":
            return "running"
        wait = self.retry_in(now)
        retry = f"next retry in {wait:.0f} s" if wait else "retried at its next use"
        tries = f"{self.failures} failed start{'s' if self.failures != 1 else ''}"
        return f"failing ({tries}, last {_clock(self.checked_at)}): {self.error}; {retry}"


def after_failure(previous: Health | None, error: str, stderr: tuple[str, ...],
                  now: float) -> Health:
    """The record after a failed start: the wait doubles with each failure in a row."""
    failures = (previous.failures if previous and previous.state == "failing" else 0) + 1
    wait = min(FIRST_RETRY * 2 ** (failures - 1), LAST_RETRY)
    return Health("failing", error, list(stderr), failures, now, now + wait)


def health_file(run_dir: Path) -> Path:
    return run_dir / HEALTH_FILE


def write_health(path: Path, owner: int, servers: dict[str, Health]) -> None:
    """Record ``servers`` as seen by process ``owner`` (the broker)."""
    data = {"pid": owner, "servers": {name: asdict(h) for name, h in servers.items()}}
    atomic_write(path, json.dumps(data, indent=1), mode=0o600)


def read_health(path: Path) -> dict[str, Health]:
    """The records of a broker that still runs; empty without one."""
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        os.kill(int(data["pid"]), 0)
        return {str(name): Health(**fields) for name, fields in data["servers"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))
