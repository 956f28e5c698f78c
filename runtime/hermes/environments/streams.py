"""Following a remote command's output (docker exec, ssh channel) with a timeout
and cancellation, for environments whose commands run out of this process.

The command is wrapped (``wrap_command``) to lead its own process group and to
print that group's id first, so a timeout or Ctrl-C kills exactly the command
and what it started — never the container or the connection.
"""

from __future__ import annotations

import queue
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

CANCEL_POLL = 0.1
"""Seconds between checks for an interrupt or the deadline."""
DRAIN_SECONDS = 2.0
"""After a kill, how long the rest of the output may take to arrive."""


def wrap_command(command: str, cwd: str | None) -> str:
    """``command`` as a group leader in ``cwd``, its group id on the first output line,
    its stderr merged into its stdout."""
    enter = f"cd {shlex.quote(cwd)} && " if cwd else ""
    inner = f'exec 2>&1; echo "$$"; {enter}exec /bin/sh -c {shlex.quote(command)}'
    # The command's stderr is its stdout: one pipe keeps the order things were written
    # in (docker carries two pipes' output with no order between them, so an early
    # stderr line could pass the group id line). setsid's own complaint about a killed
    # child is not the command's output: its stderr goes to /dev/null.
    return f"exec setsid -w /bin/sh -c {shlex.quote(inner)} 2>/dev/null"


def kill_group_command(group: int) -> str:
    return f"kill -9 -{group} 2>/dev/null; true"


@dataclass(frozen=True)
class Followed:
    output: str
    timed_out: bool = False
    cancelled: bool = False


class _Pump:
    """Reads a blocking chunk iterator on a thread, so the caller can poll."""

    def __init__(self, chunks: Iterator[bytes]):
        self.queue: queue.Queue[bytes | None] = queue.Queue()
        self.ended = False
        self._chunks = chunks
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for chunk in self._chunks:
                self.queue.put(chunk)
        except Exception:  # the stream broke (connection lost): what arrived is kept
            pass
        finally:
            self.queue.put(None)

    def get(self, timeout: float) -> bytes | None:
        """The next chunk, b"" when none came in ``timeout``, None at the end (and after)."""
        if self.ended:
            return None
        try:
            chunk = self.queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return b""
        self.ended = chunk is None
        return chunk


class _Output:
    """The collected bytes, with the group id line taken off the front."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.group: int | None = None

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if self.group is None and b"\n" in self.data:
            first, _, rest = bytes(self.data).partition(b"\n")
            self.group = int(first) if first.strip().isdigit() else 0
            self.data = bytearray(rest)

    def text(self) -> str:
        return self.data.decode(errors="replace")


def follow(chunks: Iterator[bytes], *, timeout: float, cancelled: Callable[[], bool] | None,
           kill: Callable[[int], None]) -> Followed:
    """Collect a wrapped command's output until it ends, its ``timeout`` passes or
    ``cancelled()`` turns true; then ``kill(group)`` stops it."""
    pump, output = _Pump(chunks), _Output()
    deadline = time.monotonic() + timeout
    while True:
        chunk = pump.get(min(CANCEL_POLL, deadline - time.monotonic()))
        if chunk is None:
            return Followed(output.text())
        output.add(chunk)
        stop_cancelled = cancelled is not None and cancelled()
        if stop_cancelled or time.monotonic() >= deadline:
            if _await_group(pump, output):
                kill(output.group or 0)
            _drain(pump, output)
            return Followed(output.text(), timed_out=not stop_cancelled,
                            cancelled=stop_cancelled)


def _await_group(pump: _Pump, output: _Output) -> bool:
    """Whether the group id is known (read on for it when stopped in the first instant)."""
    until = time.monotonic() + DRAIN_SECONDS
    while output.group is None and (remaining := until - time.monotonic()) > 0:
        chunk = pump.get(remaining)
        if chunk is None:
            return False
        output.add(chunk)
    return bool(output.group)


def _drain(pump: _Pump, output: _Output) -> None:
    until = time.monotonic() + DRAIN_SECONDS
    while (remaining := until - time.monotonic()) > 0:
        chunk = pump.get(remaining)
        if chunk is None:
            return
        output.add(chunk)
