"""One review per session at a time, across every process of a home.

The gateway, the warm server's children and in-process CLIs may each hold the same
session: ``hermes -z --continue`` twice in a row, the second while the server still
runs the first one's review. A review takes an exclusive ``flock`` on one of ``SLOTS``
lock files in ``run/reviews/``, picked by the session id, without waiting; when another
review holds it, this one is not started (the session's next due turn tries again).
The slots bound the number of files; two sessions sharing one only defer a review.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from hermes.fsutil import private_dir

SLOTS = 256


class ReviewLocks:
    """The review lock files of one home (``run/reviews/``)."""

    def __init__(self, directory: Path):
        self.directory = directory

    def take(self, session_id: str) -> int | None:
        """The held lock's file descriptor (``give_back`` it), or None if another review
        of this slot runs."""
        private_dir(self.directory)
        slot = int(hashlib.sha256(session_id.encode()).hexdigest()[:8], 16) % SLOTS
        fd = os.open(self.directory / f"{slot:03d}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    @staticmethod
    def give_back(fd: int) -> None:
        os.close(fd)  # closing the file releases its flock
