"""The per-home session database: ``state.db`` (SQLite via sqlite-utils).

This module holds the store's lifecycle and its named, append-only
migrations. The agent issue extends the schema (FTS, usage, lineage).
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

Migration = tuple[str, Callable[[Any], None]]


def _m0001_sessions(db: Any) -> None:
    db["sessions"].create(
        {"id": str, "source": str, "model": str, "title": str, "parent_id": str,
         "started_at": float, "ended_at": float, "end_reason": str},
        pk="id", if_not_exists=True,
    )
    db["messages"].create(
        {"id": int, "session_id": str, "role": str, "content": str, "created_at": float},
        pk="id", foreign_keys=[("session_id", "sessions", "id")], if_not_exists=True,
    )
    db["messages"].create_index(["session_id", "id"], if_not_exists=True)


MIGRATIONS: tuple[Migration, ...] = (("0001_sessions", _m0001_sessions),)


class SessionStore:
    """One home's ``state.db``: open it, migrate it, add and read messages."""

    def __init__(self, path: Path):
        self.path = path
        self._db: Any = None

    @property
    def db(self) -> Any:
        if self._db is None:
            raise RuntimeError("session store is not open")
        return self._db

    def open(self) -> SessionStore:
        import sqlite_utils

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                               check_same_thread=False)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":  # e.g. network file systems: fall back to a rollback journal
            conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA foreign_keys=ON")
        self._db = sqlite_utils.Database(conn)
        self.migrate()
        return self

    def close(self) -> None:
        if self._db is not None:
            self._db.conn.close()
            self._db = None

    def migrate(self) -> list[str]:
        """Apply migrations not yet recorded; safe to repeat. Returns the names applied."""
        conn = self.db.conn
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
                     "applied_at REAL NOT NULL)")
        applied = []
        for name, migration in MIGRATIONS:
            conn.execute("BEGIN IMMEDIATE")
            try:
                done = conn.execute("SELECT 1 FROM _migrations WHERE name = ?", [name]).fetchone()
                if not done:
                    migration(self.db)
                    conn.execute("INSERT INTO _migrations VALUES (?, ?)", [name, time.time()])
                    applied.append(name)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return applied

    def create_session(self, source: str, model: str, parent_id: str | None = None) -> str:
        session_id = uuid.uuid4().hex
        self.db["sessions"].insert({"id": session_id, "source": source, "model": model,
                                    "parent_id": parent_id, "started_at": time.time()})
        return session_id

    def add_message(self, session_id: str, role: str, content: str) -> int:
        table = self.db["messages"]
        table.insert({"session_id": session_id, "role": role, "content": content,
                      "created_at": time.time()})
        return int(table.last_pk)

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        return list(self.db["messages"].rows_where("session_id = ?", [session_id],
                                                   order_by="id"))


def open_session_store(path: Path) -> Iterator[SessionStore]:
    """Resource: an open store for the runtime's lifetime."""
    store = SessionStore(path).open()
    try:
        yield store
    finally:
        store.close()
