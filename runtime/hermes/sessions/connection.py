"""Opening ``state.db`` and writing to it from several processes at once.

The gateway, CLI sessions and cron jobs of one home share the file. Every write
runs in ``BEGIN IMMEDIATE`` (the write lock is taken up front, so a transaction
never fails half-way at its first write) and is retried with jittered backoff
while another process holds the lock, so contention never surfaces as an error.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from hermes.fsutil import private_dir
from hermes.sessions.errors import SessionStoreBusy

T = TypeVar("T")

BUSY_TIMEOUT_MS = 20
"""SQLite's own wait for a lock before our jittered backoff takes over. Short, so that the
retry loop (random sleeps that spread writers out, and a deadline) is in charge; 0, 20
and 1000 ms gave the same throughput in ``bench/sessiondb.py``."""
RETRY_BUDGET_S = 120.0
"""How long a write keeps retrying before ``SessionStoreBusy``. Generous: losing a message
is worse than waiting for a long write (e.g. a large ``prune``) in another process."""
MAX_BACKOFF_S = 0.05
JOURNAL_SIZE_LIMIT = 64 * 2**20
SIDE_FILES = ("-wal", "-shm", "-journal")
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED (extended codes are masked to these)


def is_busy(exc: BaseException) -> bool:
    """True if ``exc`` means "another connection holds the lock; try again"."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def with_retries(action: Callable[[], T], *, budget_s: float = RETRY_BUDGET_S) -> T:
    """Run ``action`` until it does not fail with a busy/locked error (full-jitter backoff)."""
    deadline = time.monotonic() + budget_s
    ceiling = 0.001
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if time.monotonic() >= deadline:
                raise SessionStoreBusy(f"state.db stayed locked for {budget_s:.0f} s: {exc}; "
                                       "another process may be stuck holding it") from exc
        time.sleep(random.uniform(0, ceiling))
        ceiling = min(ceiling * 2, MAX_BACKOFF_S)


def in_transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction; roll back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn)
        conn.execute("COMMIT")
    except BaseException:
        # A failed COMMIT (busy in rollback-journal mode) leaves the transaction open.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def set_journal_mode(conn: Any) -> str:
    """Switch to WAL; where WAL cannot work, fall back to a rollback journal.

    WAL needs shared memory and POSIX locks that some network and FUSE file systems
    (and VFSes such as ``unix-dotfile``) lack: SQLite then either keeps the old mode or
    raises (``locking protocol``, ``disk I/O error``). Returns ``"wal"`` or ``"delete"``.
    A database that is already WAL on disk is left alone: switching needs an exclusive
    lock that other processes may hold.
    """
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return "wal"
    try:
        mode = str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise
        mode = "unavailable"
    if mode == "wal":
        return "wal"
    conn.execute("PRAGMA journal_mode=DELETE")
    return "delete"


def restrict_permissions(path: Path) -> None:
    """Make the database and its side files owner-only: transcripts hold private data."""
    for candidate in [path, *(path.with_name(path.name + s) for s in SIDE_FILES)]:
        try:
            if candidate.stat().st_mode & 0o077:
                os.chmod(candidate, 0o600)
        except FileNotFoundError:
            continue


def connect(path: Path, *, vfs: str | None = None) -> tuple[sqlite3.Connection, str]:
    """Open ``path`` (created 0600) with the store's pragmas; return it and its journal mode."""
    private_dir(path.parent)
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    uri = "file:" + quote(str(path)) + (f"?vfs={quote(vfs)}" if vfs else "")
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                           isolation_level=None, check_same_thread=False)
    try:
        mode = with_retries(lambda: set_journal_mode(conn))
        # In WAL, NORMAL never corrupts and loses nothing when a process dies (kill -9);
        # only an OS crash or power cut may drop the last commits. A rollback journal
        # needs FULL to stay consistent.
        conn.execute("PRAGMA synchronous=" + ("NORMAL" if mode == "wal" else "FULL"))
        # A checkpointed WAL is truncated to this size, or it keeps its high-water mark
        # (e.g. after a large prune) for good.
        conn.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT}")
        conn.execute("PRAGMA foreign_keys=ON")
        # REPLACE must fire delete triggers, or the external-content FTS indexes drift.
        conn.execute("PRAGMA recursive_triggers=ON")
    except BaseException:
        conn.close()
        raise
    restrict_permissions(path)
    return conn, mode
