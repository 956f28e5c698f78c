"""Full-text search for the sessions page: the store's own search, its snippets in parts.

The plans (word index, then trigram substrings, then a scan for short CJK terms), the
safe query parsing and the one-hit-per-conversation rule are ``hermes sessions search``'s
(``hermes.sessions.search``), with its ``QUICK`` ranking: a query matching more than 1,000
messages lists its newest hits first rather than weighing them all. A snippet comes back
as plain-text parts with a match flag, never as markup: the page escapes each part, then
marks the matches.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes.sessions import SearchHit, SessionError, SessionStore
from hermes.sessions.search import QUICK
from hermes.sessions.snippets import marked_parts

MAX_LIMIT = 100


@dataclass(frozen=True)
class Found:
    """One search hit: the best matching message of one conversation."""

    hit: SearchHit
    parts: list[tuple[str, bool]]
    """The snippet as ``(text, is_match)``: plain text, to be escaped by the page."""


def search(db: SessionStore, query: str, *, limit: int = 20, source: str | None = None,
           since: float | None = None, until: float | None = None) -> list[Found]:
    """Ranked hits for ``query`` (any text is safe), at most ``limit`` (1 to ``MAX_LIMIT``),
    only sessions from ``source`` and started in ``[since, until)`` (seconds since the
    epoch) if given."""
    if not 1 <= limit <= MAX_LIMIT:
        raise SessionError(f"search limit {limit} is out of range; give 1 to {MAX_LIMIT}")
    return [Found(hit, marked_parts(hit.snippet))
            for hit in db.search(query, limit, source=source, ranking=QUICK, since=since,
                                 until=until)]
