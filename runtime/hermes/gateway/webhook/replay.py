"""Deliveries already taken, by what identifies them: the signature (what is signed) and
the sender's id, each remembered for a while and refused if seen again.

One ``ReplayRecord`` per route. Keys are kept as SHA-256 digests (never the ids or
signatures themselves), each with the time it expires: ``replay_window`` for
``signature: generic`` routes (older timestamps are refused as stale anyway),
``replay_retention.seconds`` for ``signature: github`` routes, whose bodies carry no
signed time. At most ``entries`` keys are kept; past that the oldest go first.

With a ``path`` (in the profile's home, 0600) the record survives restarts, ``kill -9``
included: each change is one appended line (``EXPIRY DIGEST``, or ``- DIGEST`` for a
delivery forgotten because it was not taken), written before the delivery runs; a
line cut short by a crash is skipped when read. Once the file holds twice ``entries``
lines it is rewritten atomically with only the live keys.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

from hermes.fsutil import atomic_write, private_dir

DIGEST_CHARS = 32


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:DIGEST_CHARS]


class ReplayRecord:
    """The keys of one route's deliveries, each until it expires (oldest first)."""

    def __init__(self, path: Path | None, seconds: float, entries: int):
        self.path = path
        self.seconds = seconds
        self.entries = entries
        self._expiry: OrderedDict[str, float] = OrderedDict()
        self._lines = 0
        if path is not None:
            self._load(path)

    def first_time(self, keys: Iterable[str], now: float) -> bool:
        """Remember ``keys`` (of one delivery); False, remembering nothing, if any of them
        was seen and has not expired."""
        digests = [digest(key) for key in keys]
        self._prune(now)
        if any(self._expiry.get(d, 0.0) > now for d in digests):
            return False
        expiry = now + self.seconds
        for d in digests:
            self._expiry.pop(d, None)  # an expired one goes to the back
            self._expiry[d] = expiry
        self._trim()
        self._append([f"{expiry:.0f} {d}" for d in digests])
        return True

    def forget(self, keys: Iterable[str]) -> None:
        """A delivery that was not taken after all (refused, failed): it may run again."""
        digests = [digest(key) for key in keys]
        for d in digests:
            self._expiry.pop(d, None)
        self._append([f"- {d}" for d in digests])

    def _prune(self, now: float) -> None:
        """Drop the expired keys from the front (they expire in the order they came)."""
        while self._expiry:
            oldest, expiry = next(iter(self._expiry.items()))
            if expiry > now:
                return
            del self._expiry[oldest]

    def _trim(self) -> None:
        while len(self._expiry) > self.entries:
            self._expiry.popitem(last=False)

    def _append(self, lines: list[str]) -> None:
        if self.path is None:
            return
        if self._lines + len(lines) > 2 * self.entries:
            self._rewrite(self.path)
            return
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, "".join(f"{line}\n" for line in lines).encode())
        finally:
            os.close(fd)
        self._lines += len(lines)

    def _rewrite(self, path: Path) -> None:
        text = "".join(f"{expiry:.0f} {d}\n" for d, expiry in self._expiry.items())
        atomic_write(path, text, mode=0o600)
        self._lines = len(self._expiry)

    def _load(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return
        for line in text.splitlines():
            self._lines += 1
            mark, _, d = line.partition(" ")
            if len(d) != DIGEST_CHARS:
                continue  # cut short by a crash, or not ours
            if mark == "-":
                self._expiry.pop(d, None)
            elif mark.isdigit():
                self._expiry.pop(d, None)
                self._expiry[d] = float(mark)
        self._trim()
        if text and not text.endswith("\n"):  # the next line must not join a torn one
            self._rewrite(path)
