"""The per-home session database: ``state.db``.

Sessions (with lineage, usage totals and cost) and their messages, full-text indexed.
Every message is committed on its own as soon as it exists, together with its session's
totals, so a process killed mid-turn loses nothing already written and the session can
be resumed. The gateway, CLI and cron of one home share the file; see ``connection``
for how writes are serialised, ``migrations`` for the schema, ``search`` for queries.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from hermes.errors import disk_full
from hermes.sessions import lineage, listing, migrations, rows
from hermes.sessions.connection import connect, in_transaction, restrict_permissions, with_retries
from hermes.sessions.errors import AmbiguousSessionId, SessionError, SessionNotFound
from hermes.sessions.export import ExportFormat, render
from hermes.sessions.files import forget_session_files
from hermes.sessions.images import ImageFiles
from hermes.sessions.models import SearchHit, Session, UsageLike
from hermes.sessions.search import Ranking, Searcher

T = TypeVar("T")
PRUNE_BATCH = 20
"""Sessions deleted per transaction by ``prune``: short transactions never stall the
gateway's writes behind one long delete."""
_SESSION_COLUMNS = ", ".join(Session.columns())

class SessionStore:
    """One home's ``state.db``: sessions, messages, usage totals, search and export.

    Open it before use (``open()`` or ``with SessionStore(path) as store``). One
    connection, guarded by a lock, so threads may share a store; processes share the
    file. ``vfs`` picks an SQLite VFS, e.g. ``unix-dotfile`` on file systems without
    POSIX locks (WAL is then unavailable and the store falls back to a rollback journal).
    """

    def __init__(self, path: Path, *, vfs: str | None = None):
        self.path = path
        self.vfs = vfs
        self.images = ImageFiles(path.parent / "sessions" / "images")
        """Where the messages' images are kept (by reference: rows hold file names)."""
        self.journal_mode: str | None = None
        """``"wal"``, or ``"delete"`` where WAL cannot work; ``None`` until opened."""
        self._db: sqlite3.Connection | None = None
        self._utils: Any = None
        self._lock = threading.RLock()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("session store is not open")
        return self._db

    @property
    def db(self) -> Any:
        """A ``sqlite_utils.Database`` on the store's connection (imported on first use)."""
        if self._utils is None:
            import sqlite_utils

            self._utils = sqlite_utils.Database(self.conn, execute_plugins=False)
        return self._utils

    def open(self) -> SessionStore:
        """Open (creating it 0600 if needed) and migrate the database; return self."""
        try:
            self._db, self.journal_mode = connect(self.path, vfs=self.vfs)
            self.migrate()
        except sqlite3.DatabaseError as exc:  # not a database, corrupt, unreadable
            self.close()
            full = disk_full(exc, self.path)
            if full is not None:
                raise full from exc
            fix = "" if isinstance(exc, sqlite3.OperationalError) else \
                "; move it aside and a new one is created"
            raise SessionError(f"{self.path}: cannot open the sessions database: {exc}{fix}"
                               ) from exc
        except BaseException:
            self.close()
            raise
        restrict_permissions(self.path)
        return self

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = self._utils = None

    def __enter__(self) -> SessionStore:
        return self if self._db is not None else self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def migrate(self) -> list[str]:
        """Apply migrations not yet recorded; safe to repeat. Returns the names applied."""
        applied = []
        for migration in with_retries(lambda: migrations.pending(self.conn)):
            if self._write(partial(migrations.apply_one, db=self.db, migration=migration)):
                applied.append(migration[0])
        return applied

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction, retried while the file is busy."""
        def attempt() -> T:
            with self._lock:
                return in_transaction(self.conn, fn)

        try:
            return with_retries(attempt)
        except sqlite3.OperationalError as exc:  # rolled back: the file is as it was
            full = disk_full(exc, self.path)
            if full is None:
                raise
            raise full from exc

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one read transaction: a consistent snapshot across its queries."""
        def attempt() -> T:
            with self._lock:
                conn = self.conn
                conn.execute("BEGIN")
                try:
                    return fn(conn)
                finally:
                    conn.execute("COMMIT")

        return with_retries(attempt)

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            cursor = conn.execute(sql, list(params))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor]

        return self._read(query)

    # -- sessions --------------------------------------------------------------------------

    def create_session(self, source: str, model: str | None, parent_id: str | None = None, *,
                       system_prompt: str | None = None, title: str | None = None,
                       session_id: str | None = None, user: str | None = None) -> str:
        """Create a session; ``parent_id`` links a continuation (compression, branch);
        ``user``: the address of the person a direct chat talks to."""
        new_id = session_id or uuid.uuid4().hex
        now = time.time()
        row = [new_id, source, model, rows.clean_text(system_prompt), parent_id,
               rows.clean_title(title) if title is not None else None, now, now, user]

        def insert(conn: sqlite3.Connection) -> None:
            if parent_id is not None and not conn.execute(
                    "SELECT 1 FROM sessions WHERE id = ?", [parent_id]).fetchone():
                raise SessionNotFound(parent_id, hint="a session can only continue an "
                                      "existing one")
            conn.execute("INSERT INTO sessions (id, source, model, system_prompt, parent_id, "
                         "title, started_at, updated_at, user) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)

        try:
            self._write(insert)
        except sqlite3.IntegrityError as exc:
            raise SessionError(f'session "{new_id}" already exists') from exc
        return new_id

    def _update_session(self, session_id: str, assignments: str, params: list[Any]) -> None:
        cursor = self._write(lambda conn: conn.execute(
            f"UPDATE sessions SET {assignments} WHERE id = ?", [*params, session_id]))
        if cursor.rowcount == 0:
            raise SessionNotFound(session_id)

    def end_session(self, session_id: str, end_reason: str = "completed") -> None:
        """Mark a session ended (``end_reason``: completed, interrupted, compression, ...)."""
        now = time.time()
        self._update_session(session_id, "ended_at = ?, end_reason = ?, "
                             "updated_at = max(coalesce(updated_at, 0), ?)",
                             [now, end_reason, now])

    def rename(self, session_id: str, title: str) -> None:
        """Set a session's title (one line, at most 200 characters)."""
        self._update_session(session_id, "title = ?", [rows.clean_title(title)])

    def get_session(self, session_id: str) -> Session:
        found = self._rows(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?",
                           [session_id])
        if not found:
            raise SessionNotFound(session_id)
        return Session.from_row(found[0])

    def lineage(self, session_id: str) -> list[tuple[int, Session]]:
        """The tree ``session_id`` belongs to (its root, continuations and sub-agents'
        sessions) as ``(depth, session)``, depth first; empty if there is no such session."""
        return self._read(lambda conn: lineage.lineage(conn, session_id, _SESSION_COLUMNS))

    def resolve_id(self, id_or_prefix: str) -> str:
        """The one session id equal to, or starting with, ``id_or_prefix``."""
        prefix = id_or_prefix.strip()
        if not prefix:
            raise SessionNotFound(id_or_prefix)
        # A range scan on the primary key: every id that starts with the prefix.
        ids = [row["id"] for row in self._rows(
            "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
            [prefix, prefix + "\U0010ffff"])]
        if prefix in ids or len(ids) == 1:
            return prefix if prefix in ids else ids[0]
        if not ids:
            raise SessionNotFound(prefix)
        raise AmbiguousSessionId(prefix, ids)

    def list_sessions(self, *, source: str | None = None, limit: int | None = 50,
                      since: float | None = None, until: float | None = None,
                      after: tuple[float, str] | None = None) -> list[Session]:
        """Sessions, newest first; only those from ``source`` and started in
        ``[since, until)`` if given; only those after the cursor ``after``
        (``(started_at, id)`` of the last row of the previous page)."""
        where, params = listing.Listing(source, since, until, after).where()
        found = self._rows(f"SELECT {_SESSION_COLUMNS} FROM sessions {where} "
                           f"{listing.ORDER} LIMIT ?", [*params, -1 if limit is None else limit])
        return [Session.from_row(row) for row in found]

    def child_counts(self, session_ids: Iterable[str]) -> dict[str, int]:
        """How many sessions continue each of ``session_ids`` (compressions, sub-agents);
        ids without children are left out."""
        return {row["parent_id"]: row["n"] for row in self._rows(
            "SELECT parent_id, count(*) AS n FROM sessions WHERE parent_id IN "
            "(SELECT value FROM json_each(?)) GROUP BY parent_id",
            [json.dumps(list(session_ids))])}

    def delete_session(self, session_id: str) -> int:
        """Delete a session, its messages and their index rows. Returns messages deleted.

        Its continuations are re-attached to its parent, so lineage stays connected.
        """
        deleted = self._write(lambda conn: rows.delete_session(conn, session_id))
        if deleted is None:
            raise SessionNotFound(session_id)
        self.sweep_images()
        forget_session_files(self.path.parent, [session_id])
        return deleted

    def prune(self, older_than: timedelta, *, dry_run: bool = False) -> list[str]:
        """Delete sessions with no activity for ``older_than``; return their ids."""
        cutoff = time.time() - older_than.total_seconds()
        ids = [row["id"] for row in self._rows(
            f"SELECT id FROM sessions WHERE {rows.STALE} ORDER BY started_at", [cutoff])]
        if dry_run:
            return ids
        pruned: list[str] = []
        for start in range(0, len(ids), PRUNE_BATCH):
            batch = ids[start:start + PRUNE_BATCH]
            pruned += self._write(partial(rows.delete_stale, session_ids=batch, cutoff=cutoff))
        self.sweep_images()
        forget_session_files(self.path.parent, pruned)
        return pruned

    def sweep_images(self) -> int:
        """Delete the stored images no message names any more; how many."""
        named = self._read(lambda conn: [row[0] for row in conn.execute(
            "SELECT images FROM messages WHERE images IS NOT NULL")])
        return self.images.sweep({name for value in named for name in json.loads(value)})

    # -- messages --------------------------------------------------------------------------

    def add_message(self, session_id: str, role: str, content: Any, *,
                    tool_calls: Any = None, tool_call_id: str | None = None,
                    tool_name: str | None = None, reasoning: str | None = None,
                    finish_reason: str | None = None, usage: UsageLike | None = None,
                    created_at: float | None = None) -> int:
        """Persist one message now (its own transaction) and add ``usage`` to the totals.
        ``content`` may be a list of parts: its images are kept as files (``images``)."""
        content, images = self.images.keep(content)
        row = rows.message_row(session_id, role, content, tool_calls=tool_calls,
                           tool_call_id=tool_call_id, tool_name=tool_name, reasoning=reasoning,
                           finish_reason=finish_reason, usage=usage, images=images,
                           created_at=created_at)
        totals = rows.Totals().add(usage).params(session_id, row[-1])

        def write(conn: sqlite3.Connection) -> int:
            message_id = conn.execute(rows.INSERT_MESSAGE, row).lastrowid
            conn.execute(rows.ADD_TOTALS, totals)
            return int(message_id or 0)

        return self._guard_session(session_id, lambda: self._write(write))

    def add_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Persist several messages in one transaction (imports, forks).

        Keys as ``add_message``'s arguments; ``name`` (the OpenAI wire name) is taken as
        ``tool_name``.
        """
        new_rows, totals = [], rows.Totals()
        for message in messages:
            extra = {k: message[k] for k in rows.MESSAGE_FIELDS if k in message}
            if "name" in message and "tool_name" not in extra:  # the OpenAI wire name
                extra["tool_name"] = message["name"]
            content, images = self.images.keep(message.get("content"))
            extra.setdefault("images", images)
            new_rows.append(rows.message_row(session_id, message["role"], content, **extra))
            totals.add(extra.get("usage"))
        params = totals.params(session_id, max((r[-1] for r in new_rows), default=time.time()))

        def write(conn: sqlite3.Connection) -> list[int]:
            ids = [int(conn.execute(rows.INSERT_MESSAGE, row).lastrowid or 0)
                   for row in new_rows]
            conn.execute(rows.ADD_TOTALS, params)
            return ids

        return self._guard_session(session_id, lambda: self._write(write))

    def delete_messages_after(self, session_id: str, message_id: int) -> int:
        """Take back the end of a transcript (``/undo``): delete the session's messages
        after ``message_id`` (0: all). The usage totals stay. Returns messages deleted."""
        deleted = self._write(partial(rows.delete_messages_after, session_id=session_id,
                                      message_id=message_id))
        if deleted is None:
            raise SessionNotFound(session_id)
        self.sweep_images()
        return deleted

    def add_usage(self, session_id: str, usage: UsageLike) -> None:
        """Add the usage of a model call that produced no message (titles, summaries)."""
        params = rows.Totals().add(usage, messages=0).params(session_id, time.time())
        cursor = self._write(lambda conn: conn.execute(rows.ADD_TOTALS, params))
        if cursor.rowcount == 0:
            raise SessionNotFound(session_id)

    def _guard_session(self, session_id: str, write: Callable[[], T]) -> T:
        try:
            return write()
        except sqlite3.IntegrityError as exc:  # the messages -> sessions foreign key
            raise SessionNotFound(session_id) from exc

    def messages(self, session_id: str, *, after: int = 0, limit: int | None = None,
                 before: int | None = None, last: bool = False) -> list[dict[str, Any]]:
        """A session's messages in order, ``tool_calls`` and ``images`` (the file names
        of its images in ``self.images``) decoded from JSON; only those after the message
        id ``after`` (and before the id ``before``), at most ``limit``, if given: the
        first ``limit`` of them, or with ``last`` the last ``limit``."""
        newest = "DESC" if last else ""
        found = self._rows(f"SELECT * FROM (SELECT * FROM messages WHERE session_id = ? "
                           f"AND id > ? AND id < ? ORDER BY id {newest} LIMIT ?) ORDER BY id",
                           [session_id, after, 2**63 - 1 if before is None else before,
                            -1 if limit is None else limit])
        for message in found:
            for key in ("tool_calls", "images"):
                if message.get(key) is not None:
                    message[key] = json.loads(message[key])
        return found

    # -- search and export -----------------------------------------------------------------

    def search(self, query: str, limit: int = 20, *, source: str | None = None,
               ranking: Ranking = Ranking(), since: float | None = None,
               until: float | None = None) -> list[SearchHit]:
        """Ranked hits, one per conversation (lineage root); any text is a safe query.
        Only sessions from ``source``, started in ``[since, until)``, where given."""
        return self._read(lambda conn: Searcher(conn, source, ranking, since=since,
                                                until=until).search(query, limit))

    def export(self, session_id: str, fmt: ExportFormat = "jsonl") -> str:
        """A session as JSONL (lossless) or Markdown (``"md"``)."""
        return render(self.get_session(session_id), self.messages(session_id), fmt)


def open_session_store(path: Path) -> Iterator[SessionStore]:
    """Resource: an open store for the runtime's lifetime."""
    store = SessionStore(path).open()
    try:
        yield store
    finally:
        store.close()
