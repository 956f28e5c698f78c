"""The sessions page: one page of sessions, newest first, and the cursor to the next.

Keyset pagination on ``(started_at, id)`` (``hermes.sessions.listing``): sessions created
while someone pages never shift or repeat rows, and the thousandth page costs what the
first does. With several profiles' stores, their pages are merged in the same order.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass

from hermes.sessions import Session, SessionError, SessionStore

MAX_LIMIT = 500
_SEPARATOR = "_"  # never in a float's repr


@dataclass(frozen=True)
class SessionRow:
    """One line of the sessions page."""

    session: Session
    """The session's row: id, title, source, times, message count, tokens, cost, parent."""
    profile: str | None
    """The profile whose ``state.db`` holds it (``None`` when one store was asked)."""
    children: int
    """How many sessions continue it (a compression's continuation, sub-agents)."""

    @property
    def last_activity(self) -> float:
        """The last message, rename or end; the start for a session never touched since."""
        return self.session.updated_at or self.session.started_at

    @property
    def tokens(self) -> int:
        return self.session.input_tokens + self.session.output_tokens

    @property
    def compressed(self) -> bool:
        """Ended by compression: the conversation goes on in a child session."""
        return self.session.end_reason == "compression"


@dataclass(frozen=True)
class SessionPage:
    rows: list[SessionRow]
    next_cursor: str | None
    """Pass as ``cursor`` for the next (older) page; ``None`` on the last page."""


Stores = SessionStore | Mapping[str, SessionStore]
"""One profile's store, or several by profile name."""


def encode_cursor(session: Session) -> str:
    """The opaque, URL-safe cursor continuing after ``session``."""
    return f"{session.started_at!r}{_SEPARATOR}{session.id}"


def decode_cursor(cursor: str) -> tuple[float, str]:
    """``(started_at, id)`` of a cursor; ``SessionError`` for anything else."""
    started, _, session_id = cursor.partition(_SEPARATOR)
    try:
        value = float(started)
    except ValueError:
        value = math.nan
    if not session_id or not math.isfinite(value):
        raise SessionError(f'invalid page cursor "{cursor[:80]}"; start again from the first '
                           "page (no cursor)")
    return value, session_id


def session_page(db: Stores, *, source: str | None = None, profile: str | None = None,
                 since: float | None = None, until: float | None = None,
                 cursor: str | None = None, limit: int = 50) -> SessionPage:
    """A page of sessions, newest first: those from ``source``, started in
    ``[since, until)``, of ``profile`` (a name of ``db`` when it maps several), after
    ``cursor``. At most ``limit`` rows (1 to ``MAX_LIMIT``)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise SessionError(f"page size {limit} is out of range; give 1 to {MAX_LIMIT}")
    after = decode_cursor(cursor) if cursor else None
    stores = _chosen(db, profile)
    found: list[list[tuple[str | None, Session]]] = []
    for name, store in stores.items():
        sessions = store.list_sessions(source=source, since=since, until=until, after=after,
                                       limit=limit + 1)
        found.append([(name, s) for s in sessions])
    merged = list(heapq.merge(*found, key=lambda pair: (pair[1].started_at, pair[1].id),
                              reverse=True))
    shown = merged[:limit]
    rows = _with_children(stores, shown)
    more = len(merged) > limit
    return SessionPage(rows, encode_cursor(shown[-1][1]) if more and shown else None)


def _chosen(db: Stores, profile: str | None) -> dict[str | None, SessionStore]:
    if isinstance(db, SessionStore):
        return {profile: db}
    if profile is None:
        return {name: store for name, store in db.items()}
    if profile not in db:
        known = ", ".join(sorted(db)) or "none"
        raise SessionError(f'no profile "{profile}" here; profiles: {known}')
    return {profile: db[profile]}


def _with_children(stores: dict[str | None, SessionStore],
                   shown: list[tuple[str | None, Session]]) -> list[SessionRow]:
    counts = {name: store.child_counts(s.id for n, s in shown if n == name)
              for name, store in stores.items()}
    return [SessionRow(s, name, counts[name].get(s.id, 0)) for name, s in shown]
