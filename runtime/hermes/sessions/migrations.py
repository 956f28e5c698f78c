"""Named, append-only migrations of ``state.db``, recorded in its ``_migrations`` table.

Never edit or reorder a migration that has shipped: add a new one. Each runs in its own
``BEGIN IMMEDIATE`` transaction together with its record, so a crash leaves it either
applied and recorded or not at all, and two processes opening an old database at once
apply it exactly once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

Migration = tuple[str, Callable[[Any], None]]
"""A name and a function taking a ``sqlite_utils.Database`` on the open connection."""


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


def _execute_all(db: Any, statements: list[str]) -> None:
    # One statement at a time: sqlite3's executescript() would COMMIT our transaction.
    for statement in statements:
        db.conn.execute(statement)


def _m0002_message_details(db: Any) -> None:
    columns = ["tool_calls TEXT", "tool_call_id TEXT", "tool_name TEXT", "reasoning TEXT",
               "input_tokens INTEGER", "output_tokens INTEGER", "finish_reason TEXT"]
    _execute_all(db, [f"ALTER TABLE messages ADD COLUMN {c}" for c in columns])


TOKEN_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                 "reasoning_tokens")


def _m0003_session_totals(db: Any) -> None:
    columns = ["system_prompt TEXT", "updated_at REAL",
               "message_count INTEGER NOT NULL DEFAULT 0",
               *(f"{name} INTEGER NOT NULL DEFAULT 0" for name in TOKEN_COLUMNS),
               # 0 for a new session (no calls yet), NULL once any call is unpriced.
               "cost_usd REAL DEFAULT 0"]
    _execute_all(db, [f"ALTER TABLE sessions ADD COLUMN {c}" for c in columns])
    _execute_all(db, [
        # Sessions from before usage tracking: their cost was never recorded, so it is
        # unknown (NULL), not free.
        """UPDATE sessions SET
             message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),
             updated_at = max(started_at, coalesce(ended_at, 0), coalesce(
               (SELECT max(created_at) FROM messages m WHERE m.session_id = sessions.id), 0)),
             cost_usd = NULL""",
        "CREATE INDEX sessions_started_at ON sessions(started_at)",
        "CREATE INDEX sessions_updated_at ON sessions(updated_at)",
        "CREATE INDEX sessions_parent_id ON sessions(parent_id)",
        "CREATE INDEX sessions_source_started_at ON sessions(source, started_at)",
    ])


FTS_COLUMNS = "content, tool_name, tool_calls"


def _fts_statements(table: str, tokenize: str) -> list[str]:
    """An external-content FTS5 index over ``messages`` and the triggers keeping it in sync.

    External content: the text is stored once, in ``messages``; the index holds only
    tokens, and ``snippet()`` reads the text back from ``messages``.
    """
    new = "new.content, new.tool_name, new.tool_calls"
    old = "old.content, old.tool_name, old.tool_calls"
    insert = f"INSERT INTO {table}(rowid, {FTS_COLUMNS}) VALUES (new.id, {new});"
    delete = (f"INSERT INTO {table}({table}, rowid, {FTS_COLUMNS}) "
              f"VALUES ('delete', old.id, {old});")
    return [
        f"CREATE VIRTUAL TABLE {table} USING fts5({FTS_COLUMNS}, content='messages', "
        f"content_rowid='id', tokenize='{tokenize}')",
        # bm25 column weights: the message text matters most, tool names and arguments less.
        f"INSERT INTO {table}({table}, rank) VALUES ('rank', 'bm25(4.0, 2.0, 1.0)')",
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON messages BEGIN {insert} END",
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON messages BEGIN {delete} END",
        f"CREATE TRIGGER {table}_au AFTER UPDATE OF {FTS_COLUMNS} ON messages "
        f"BEGIN {delete} {insert} END",
        f"INSERT INTO {table}({table}) VALUES ('rebuild')",  # index existing messages
    ]


def _m0004_message_search(db: Any) -> None:
    _execute_all(db, _fts_statements("messages_fts", "unicode61 remove_diacritics 2"))
    # Trigram: substrings and scripts written without spaces (CJK), which unicode61
    # would index as one long token per run of text.
    _execute_all(db, _fts_statements("messages_trigram", "trigram"))


def _m0005_message_images(db: Any) -> None:
    # The file names of a message's images in sessions/images/ (a JSON list), not the
    # images themselves: a row stays small, an image sent twice is stored once.
    _execute_all(db, ["ALTER TABLE messages ADD COLUMN images TEXT"])


def _m0006_session_pages(db: Any) -> None:
    # Pages of sessions are ordered by (started_at, id) and continue from a cursor on both
    # (``listing``): with the id in the index, a page is one index walk and no sort. These
    # supersede the (started_at) and (source, started_at) indexes, which are their prefixes.
    _execute_all(db, [
        "CREATE INDEX IF NOT EXISTS sessions_started_at_id ON sessions(started_at, id)",
        "CREATE INDEX IF NOT EXISTS sessions_source_started_at_id "
        "ON sessions(source, started_at, id)",
        "DROP INDEX IF EXISTS sessions_started_at",
        "DROP INDEX IF EXISTS sessions_source_started_at",
    ])


def _m0007_session_user(db: Any) -> None:
    # Who a direct chat's session talks to (``platform:user_id``; NULL for the CLI, groups,
    # cron): ``session_search`` keeps one person's sessions from another (``identities``).
    _execute_all(db, ["ALTER TABLE sessions ADD COLUMN user TEXT"])


MIGRATIONS: tuple[Migration, ...] = (
    ("0001_sessions", _m0001_sessions),
    ("0002_message_details", _m0002_message_details),
    ("0003_session_totals", _m0003_session_totals),
    ("0004_message_search", _m0004_message_search),
    ("0005_message_images", _m0005_message_images),
    ("0006_session_pages", _m0006_session_pages),
    ("0007_session_user", _m0007_session_user),
)


def applied(conn: sqlite3.Connection) -> set[str]:
    """Names of the migrations recorded in the database (read-only: takes no write lock)."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                          "AND name = '_migrations'").fetchone()
    return {row[0] for row in conn.execute("SELECT name FROM _migrations")} if exists else set()


def pending(conn: sqlite3.Connection) -> list[Migration]:
    done = applied(conn)
    return [m for m in MIGRATIONS if m[0] not in done]


def apply_one(conn: sqlite3.Connection, db: Any, migration: Migration) -> bool:
    """Inside a write transaction: apply ``migration`` unless recorded. True if applied."""
    name, function = migration
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
                 "applied_at REAL NOT NULL)")
    if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", [name]).fetchone():
        return False  # another process got here first
    function(db)
    conn.execute("INSERT INTO _migrations VALUES (?, ?)", [name, time.time()])
    return True
