"""Background commands of the docker and ssh environments: the command runs there,
its output streams into a log file here (where the ``process`` tool reads it)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from hermes.environments.base import BackgroundProcess
from hermes.environments.streams import DRAIN_SECONDS
from hermes.fsutil import private_dir

PID_WAIT = 10.0
"""Seconds the first output line (the command's process group) may take to arrive."""


class StreamedProcess(BackgroundProcess):
    """A wrapped command (``streams.wrap_command``); ``pid`` is its process group there."""

    def __init__(self, chunks: Iterator[bytes], *, exit_code: Callable[[], int],
                 kill: Callable[[int], None], log_path: Path):
        self.pid = 0
        self.log_path = log_path
        self._exit_code = exit_code
        self._kill = kill
        self._started = threading.Event()
        self._done = threading.Event()
        private_dir(log_path.parent)
        log_path.touch()
        threading.Thread(target=self._copy, args=(chunks,), daemon=True).start()
        self._started.wait(PID_WAIT)

    def _copy(self, chunks: Iterator[bytes]) -> None:
        head = b""
        try:
            with open(self.log_path, "ab") as log:
                for chunk in chunks:
                    if not self._started.is_set():
                        head += chunk
                        if b"\n" not in head:
                            continue
                        first, _, chunk = head.partition(b"\n")
                        self.pid = int(first) if first.strip().isdigit() else 0
                        self._started.set()
                    log.write(chunk)
                    log.flush()  # ``process poll`` shows output while the command runs
        except Exception:  # a broken stream ends the job; its log keeps what arrived
            pass
        finally:
            self._started.set()
            self._done.set()

    def poll(self) -> int | None:
        return self._exit_code() if self._done.is_set() else None

    def wait(self, timeout: float | None) -> int | None:
        self._done.wait(timeout)
        return self.poll()

    def kill(self) -> None:
        if not self._done.is_set() and self.pid:
            self._kill(self.pid)
            self._done.wait(DRAIN_SECONDS)
