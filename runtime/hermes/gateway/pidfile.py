"""One gateway per home: a lock held for the gateway's life, its pid, and its status.

``gateway.lock`` (a ``filelock``) is held while the gateway runs, so a second
start fails at once and names the pid in ``gateway.pid``. ``gateway.json`` holds
what ``hermes gateway status`` shows; it is rewritten atomically as things change.
A crashed gateway leaves a pid file whose process is gone: readers treat it as
stopped, and the next start takes the lock and replaces it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from hermes.errors import UserError
from hermes.fsutil import atomic_write
from hermes.home import Home

PID_FILE, LOCK_FILE, STATUS_FILE = "gateway.pid", "gateway.lock", "gateway.json"


class GatewayRunning(UserError):
    """A gateway already serves this home."""


class GatewayLock:
    def __init__(self, home: Home):
        self.home = home
        self._lock = FileLock(str(home.path / LOCK_FILE))

    def acquire(self) -> None:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            pid = running_pid(self.home)
            holder = f"pid {pid}" if pid else "another process"
            raise GatewayRunning(f"a gateway already runs for profile {self.home.name} "
                                 f"({holder}); stop it with `hermes -p {self.home.name} "
                                 "gateway stop`") from None
        atomic_write(self.home.path / PID_FILE, f"{os.getpid()}\n", mode=0o600)

    def release(self) -> None:
        for name in (PID_FILE, STATUS_FILE):
            (self.home.path / name).unlink(missing_ok=True)
        self._lock.release()


def running_pid(home: Home) -> int | None:
    """The pid of the gateway serving ``home``, if one is alive."""
    try:
        pid = int((home.path / PID_FILE).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid if _is_gateway(pid) else None


def _is_gateway(pid: int) -> bool:
    try:
        return b"gateway" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc (macOS): trust the pid file


def write_status(home: Home, status: dict[str, Any]) -> None:
    atomic_write(home.path / STATUS_FILE, json.dumps(status, indent=2) + "\n", mode=0o600)


def read_status(home: Home) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads((home.path / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data
