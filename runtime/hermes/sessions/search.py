"""Full-text search over one home's messages: safe queries, CJK/substring fallback, lineage.

User text never reaches FTS5 as syntax: it is split into terms and every term is quoted,
so nothing a user types raises an FTS5 syntax error. Supported on top of plain words:
``"exact phrases"``, ``prefix*`` and ``OR`` between alternatives.

Three plans, each the fallback of the one before when it finds nothing:

1. words: the unicode61 index, ranked by bm25;
2. substrings: the trigram index (terms of 3+ characters), e.g. ``ploym`` in ``deployment``;
3. short CJK terms: a ``LIKE`` scan, because trigrams cannot match 1-2 characters and
   unicode61 indexes ``我明天去北京出差`` as a single token, so ``北京`` needs a substring.

Queries containing CJK (or Thai) skip the word plan. Every plan returns at most one hit per
lineage root (a compressed or branched conversation is one conversation).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from hermes.sessions.models import SearchHit
from hermes.sessions.snippets import substring_snippet, word_snippet

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
MAX_LINEAGE_DEPTH = 64
TRIGRAM_MIN_CHARS = 3
RANK_WINDOW = 20_000
"""Only the newest this-many matches of a query are ranked. bm25 costs about a microsecond
per match, so a word found in most messages of a large home would take seconds to rank
(and its bm25 is near zero anyway: the word says little); past this, recency decides."""
RANK = "bm25({table}, 4.0, 2.0, 1.0)"
"""The indexes' own ``rank`` (migration 0004), called directly: ``ORDER BY rank`` makes
FTS5 evaluate the query a second time to sort it, which doubled a search's cost."""


@dataclass(frozen=True)
class Ranking:
    """How hits are ordered when a query matches many messages."""

    window: int = RANK_WINDOW
    """Only the newest this-many matches are candidates."""
    beyond: Literal["rank", "newest"] = "rank"
    """A query matching more than ``window`` messages: ``rank`` orders the window by bm25;
    ``newest`` skips bm25 and lists every match, newest first. bm25 weighs each term by reading
    every message holding it, so with millions of messages a common word costs hundreds
    of milliseconds to rank, even in a small window."""


QUICK = Ranking(window=1_000, beyond="newest")
"""For interactive pages (the dashboard): bm25 only for queries matching at most 1,000
messages, where it tells hits apart; newest first for common words."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
# Scripts written without spaces between words: Han, kana, Hangul, Thai.
_NO_SPACE_SCRIPT = re.compile("[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                              "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]")


@dataclass(frozen=True)
class Term:
    """One quoted term or phrase of a query; ``prefix`` for a trailing ``*``."""

    text: str
    prefix: bool = False


Query = list[list[Term]]
"""Alternatives (``OR``) of groups whose terms must all match."""


def parse_query(text: str) -> Query:
    """Split user text into OR-groups of terms. Never raises."""
    # Lone surrogates cannot be bound to SQLite; NUL ends an FTS5 string early.
    text = text.encode("utf-8", "replace").decode("utf-8")[:MAX_QUERY_CHARS]
    text = _CONTROL.sub(" ", text)
    groups: Query = [[]]
    count = 0
    for match in _TOKEN.finditer(text):
        phrase, bare = match.group(1), match.group(2)
        if bare in ("OR", "|"):
            groups.append([])
            continue
        if bare == "AND":  # implicit between terms
            continue
        term = _term(phrase, bare)
        if term and count < MAX_TERMS:
            groups[-1].append(term)
            count += 1
    return [group for group in groups if group]


def _term(phrase: str | None, bare: str | None) -> Term | None:
    if phrase is not None:
        return Term(phrase) if phrase.strip() else None
    word = (bare or "").replace('"', "")
    stripped = word.rstrip("*")
    return Term(stripped, prefix=stripped != word) if stripped else None


def fts_expression(query: Query, *, prefixes: bool = True) -> str:
    """The FTS5 MATCH expression: every term quoted, so user text is never syntax."""
    def quoted(term: Term) -> str:
        star = "*" if prefixes and term.prefix else ""
        return '"' + term.text.replace('"', '""') + '"' + star

    return " OR ".join("(" + " ".join(quoted(t) for t in group) + ")" for group in query)


def has_no_space_script(query: Query) -> bool:
    return any(_NO_SPACE_SCRIPT.search(t.text) for group in query for t in group)


def trigram_ready(query: Query) -> bool:
    return all(len(t.text) >= TRIGRAM_MIN_CHARS for group in query for t in group)


Row = tuple[Any, ...]
"""A candidate: message id, session id, rank."""
PICK_BATCH = 256
_JOIN_MESSAGES = "JOIN messages m ON m.id = f.rowid"
_JOIN_SESSIONS = " JOIN sessions s ON s.id = m.session_id"


class Searcher:
    """Runs one search on an open connection (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection, source: str | None = None,
                 ranking: Ranking = Ranking(), *, since: float | None = None,
                 until: float | None = None):
        """Only messages of sessions from ``source``, started in ``[since, until)``
        (seconds since the epoch), where given."""
        self.conn = conn
        self.ranking = ranking
        filters = [(clause, value) for clause, value in (
            (" AND s.source = ?", source), (" AND s.started_at >= ?", since),
            (" AND s.started_at < ?", until)) if value is not None]
        self.where = "".join(clause for clause, _ in filters)
        self.params: list[Any] = [value for _, value in filters]
        # Joins cost a lookup per match: only made when a filter needs them.
        self.joins = f"{_JOIN_MESSAGES}{_JOIN_SESSIONS}" if filters else ""

    def search(self, text: str, limit: int) -> list[SearchHit]:
        query = parse_query(text)
        if not query or limit <= 0:
            return []
        plans: list[Callable[[Query, int], list[SearchHit]]] = []
        if not has_no_space_script(query):
            plans.append(lambda q, n: self._fts(q, n, "messages_fts"))
        if trigram_ready(query):
            plans.append(lambda q, n: self._fts(q, n, "messages_trigram"))
        elif has_no_space_script(query):
            plans.append(self._like)
        for plan in plans:  # each is the fallback of the one before: first with hits wins
            hits = plan(query, limit)
            if hits:
                return hits
        return []

    def _floor(self, table: str, expression: str) -> int:
        """The oldest message id within the newest ``RANK_WINDOW`` matches (0: all)."""
        row = self.conn.execute(
            f"SELECT f.rowid FROM {table} f {self.joins} WHERE {table} MATCH ?{self.where} "
            "ORDER BY f.rowid DESC LIMIT 1 OFFSET ?",
            [expression, *self.params, self.ranking.window - 1]).fetchone()
        return int(row[0]) if row else 0

    def _fts(self, query: Query, limit: int, table: str) -> list[SearchHit]:
        words = table == "messages_fts"
        expression = fts_expression(query, prefixes=words)
        floor = self._floor(table, expression)
        # Newest first reads matches lazily, back from the newest, until it has ``limit``
        # conversations: no window, so older conversations are found as well.
        newest = floor > 0 and self.ranking.beyond == "newest"
        rank = "0.0" if newest else RANK.format(table=table)
        cursor = self.conn.execute(
            f"SELECT f.rowid, m.session_id, {rank} AS r FROM {table} f "
            f"{self.joins or _JOIN_MESSAGES} WHERE {table} MATCH ?{self.where} "
            f"AND f.rowid >= ? ORDER BY {'f.rowid DESC' if newest else 'r'}",
            [expression, *self.params, 0 if newest else floor])
        chosen = self._pick(cursor, limit)
        if words:
            terms = [(t.text, t.prefix) for group in query for t in group]
            return self._hits(chosen, lambda texts: word_snippet(texts, terms))
        return self._hits(chosen, lambda texts: substring_snippet(texts, _texts(query)))

    def _like(self, query: Query, limit: int) -> list[SearchHit]:
        one = "(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' " \
              "OR m.tool_calls LIKE ? ESCAPE '\\')"
        groups = " OR ".join("(" + " AND ".join([one] * len(group)) + ")" for group in query)
        params = [_like_pattern(t) for t in _texts(query) for _ in range(3)]
        cursor = self.conn.execute(
            f"SELECT m.id, m.session_id, 0.0 FROM messages m{_JOIN_SESSIONS if self.where else ''}"
            f" WHERE ({groups}){self.where} ORDER BY m.id DESC",
            [*params, *self.params])
        chosen = self._pick(cursor, limit)
        return self._hits(chosen, lambda texts: substring_snippet(texts, _texts(query)))

    def _pick(self, cursor: sqlite3.Cursor, limit: int) -> list[tuple[Row, str]]:
        """The best candidate of each lineage root (with that root), up to ``limit``.

        Reads the ranked candidates in batches and stops as soon as it has enough, so
        the ranking runs once even when a few long conversations hold most matches.
        """
        chosen: list[tuple[Row, str]] = []
        taken: set[str] = set()
        roots: dict[str, str] = {}
        while len(chosen) < limit:
            batch = cursor.fetchmany(PICK_BATCH)
            if not batch:
                break
            roots.update(self.roots({row[1] for row in batch} - roots.keys()))
            for row in batch:
                root = roots[row[1]]  # every message has a session (foreign key)
                if root not in taken and len(chosen) < limit:
                    taken.add(root)
                    chosen.append((row, root))
        cursor.close()
        return chosen

    def _hits(self, chosen: list[tuple[Row, str]],
              snippet: Callable[[tuple[str | None, ...]], str]) -> list[SearchHit]:
        details = {row[0]: row[1:] for row in self.conn.execute(
            "SELECT m.id, m.content, m.tool_name, m.tool_calls, m.role, m.created_at, "
            "s.title, s.source FROM messages m JOIN sessions s ON s.id = m.session_id "
            "WHERE m.id IN (SELECT value FROM json_each(?))",
            [json.dumps([row[0] for row, _ in chosen])])}
        hits = []
        for (message_id, session_id, rank), root in chosen:
            content, tool_name, tool_calls, role, created_at, title, source = details[message_id]
            hits.append(SearchHit(
                session_id=session_id, root_id=root, message_id=message_id, role=role,
                snippet=snippet((content, tool_name, tool_calls)), created_at=created_at,
                rank=rank, title=title, source=source))
        return hits

    def roots(self, session_ids: Iterable[str]) -> dict[str, str]:
        """The lineage root of each session (a missing parent ends the chain)."""
        rows = self.conn.execute(
            "WITH RECURSIVE up(start, id, parent, depth) AS ("
            " SELECT id, id, parent_id, 0 FROM sessions"
            " WHERE id IN (SELECT value FROM json_each(?))"
            " UNION ALL SELECT up.start, s.id, s.parent_id, up.depth + 1 FROM up"
            " JOIN sessions s ON s.id = up.parent WHERE up.depth < ?)"
            " SELECT start, id FROM up ORDER BY depth", [json.dumps(sorted(session_ids)),
                                                          MAX_LINEAGE_DEPTH]).fetchall()
        return dict(rows)  # ordered by depth: the deepest ancestor wins


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _texts(query: Query) -> list[str]:
    return [t.text for group in query for t in group]
