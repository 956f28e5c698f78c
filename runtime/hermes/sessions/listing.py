"""Which sessions a listing shows, newest first, a page at a time.

Pages are keyset-paginated on ``(started_at, id)``: a page starts after the last row of
the one before, so a session created meanwhile never shifts or repeats rows, and a deep
page costs what the first one does (no ``OFFSET`` scan). Shared by ``hermes sessions list``
and the dashboard's sessions page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ORDER = "ORDER BY started_at DESC, id DESC"
"""Newest first; the id breaks ties, so the order is total and a cursor is exact."""


@dataclass(frozen=True)
class Listing:
    """Filters of one page of sessions; every field is optional."""

    source: str | None = None
    """Only sessions from this source (``cli``, ``telegram``, ``cron``, ...)."""
    since: float | None = None
    """Only sessions started at or after this time (seconds since the epoch)."""
    until: float | None = None
    """Only sessions started before this time."""
    after: tuple[float, str] | None = None
    """Keyset cursor: only sessions older than this ``(started_at, id)``, in ``ORDER``."""

    def where(self) -> tuple[str, list[Any]]:
        """The ``WHERE`` clause (empty when nothing filters) and its parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        for clause, value in (("source = ?", self.source), ("started_at >= ?", self.since),
                              ("started_at < ?", self.until)):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        if self.after is not None:
            # A row value comparison: SQLite walks the (started_at, id) index from there.
            clauses.append("(started_at, id) < (?, ?)")
            params += list(self.after)
        return ("WHERE " + " AND ".join(clauses) if clauses else ""), params
