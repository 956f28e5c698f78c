"""External provider ``factstore``: a local SQLite fact store with FTS5 ranking.

Facts live in their own database, ``memories/facts.db`` (0600), one row per
fact with an external-content FTS5 index (unicode61, diacritics folded) kept
in step by triggers. The model stores and looks up facts with the
``fact_remember``, ``fact_recall`` and ``fact_forget`` tools (toolset
``memory``); before each turn, ``prefetch`` recalls the facts that best match
the user's message (bm25). Every stored fact passes the memory threat scan.

``sync`` stores nothing: the fact store only ever holds what the agent chose
to remember, and whole turns are already kept in the sessions database.
Each operation opens its own short-lived connection, so the store is
thread-safe and ``shutdown`` has nothing to release.
"""

from __future__ import annotations

import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes.errors import ToolError
from hermes.fsutil import private_dir
from hermes.memory.base import ExternalProvider
from hermes.memory.facttools import fact_tools
from hermes.memory.scan import scan_text
from hermes.tools.base import ToolSpec

MAX_FACT_CHARS = 1000
MAX_QUERY_TERMS = 16
STOPWORDS = frozenset((
    "about", "after", "also", "and", "any", "are", "but", "can", "could", "did", "does", "for",
    "from", "had", "has", "have", "her", "his", "how", "into", "its", "just", "know", "let",
    "like", "may", "more", "not", "now", "our", "out", "please", "should", "that", "the",
    "their", "them", "then", "there", "they", "this", "tell", "was", "were", "what", "when",
    "where", "which", "who", "why", "will", "with", "would", "you", "your",
))
"""Words too common to recall anything by (prefetch queries only)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY,
    content TEXT NOT NULL UNIQUE,
    tags TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    content, tags, content='facts', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags)
    VALUES ('delete', old.id, old.content, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags)
    VALUES ('delete', old.id, old.content, old.tags);
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
"""


@dataclass(frozen=True)
class Fact:
    id: int
    content: str
    tags: str
    created_at: str


def fts_query(text: str, *, skip_common: bool = False) -> str:
    """An FTS5 query matching any word of ``text``, every term quoted so that no
    character of the input is read as query syntax; '' when no word is left."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())
    if skip_common:
        words = [w for w in words if (len(w) > 2 or w.isdigit()) and w not in STOPWORDS]
    terms = list(dict.fromkeys(words))[:MAX_QUERY_TERMS]
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def fts5_available() -> bool:
    """Whether this Python's SQLite was built with FTS5."""
    with closing(sqlite3.connect(":memory:")) as conn:
        try:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        except sqlite3.OperationalError:
            return False
    return True


class FactStore(ExternalProvider):
    """Facts in ``path`` (SQLite + FTS5); recalls up to ``recall_limit`` per turn."""

    name = "factstore"

    def __init__(self, path: Path, *, recall_limit: int = 5, busy_timeout: float = 5.0):
        self.path = path
        self.recall_limit = recall_limit
        self.busy_timeout = busy_timeout

    def is_available(self) -> bool:
        return fts5_available()

    def initialize(self) -> None:
        """Create the database (0600) and its schema; safe to repeat."""
        private_dir(self.path.parent)
        os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(self.path, 0o600)
        with self._connect() as conn:
            conn.executescript(SCHEMA)

    def system_block(self) -> str:
        return ("## Fact store\nYou have a searchable store of facts: fact_remember saves one "
                "durable fact, fact_recall searches them, fact_forget deletes one by id. Facts "
                "that match the user's message are recalled for you in "
                '<recalled-memory source="factstore"> blocks.')

    def tool_specs(self) -> list[ToolSpec]:
        return fact_tools(self)

    def prefetch(self, user_text: str) -> str:
        facts = self.recall(user_text, self.recall_limit, skip_common=True)
        return "\n".join(f"- {fact.content} (fact #{fact.id})" for fact in facts)

    def remember(self, content: str, tags: str = "") -> tuple[Fact, bool]:
        """Store a fact; returns it and whether it is new (a repeat is a no-op)."""
        text = content.strip()
        if not text:
            raise ToolError("content is required: the fact to remember")
        if len(text) > MAX_FACT_CHARS:
            raise ToolError(f"a fact holds at most {MAX_FACT_CHARS} characters; got "
                            f"{len(text)}: split it or shorten it")
        reason = scan_text(f"{text}\n{tags}")
        if reason:
            raise ToolError(f"blocked: {reason}. Facts must not hold instructions, commands "
                            "that leak data or hidden characters")
        with self._connect() as conn:
            cursor = conn.execute("INSERT OR IGNORE INTO facts(content, tags) VALUES (?, ?)",
                                  (text, tags.strip()))
            row = conn.execute("SELECT id, content, tags, created_at FROM facts "
                               "WHERE content = ?", (text,)).fetchone()
        return Fact(*row), cursor.rowcount == 1

    def recall(self, text: str, limit: int, *, skip_common: bool = False) -> list[Fact]:
        """Facts matching any word of ``text``, best first (bm25)."""
        query = fts_query(text, skip_common=skip_common)
        if not query:
            return []
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT f.id, f.content, f.tags, f.created_at FROM facts_fts "
                "JOIN facts f ON f.id = facts_fts.rowid WHERE facts_fts MATCH ? "
                "ORDER BY bm25(facts_fts), f.id LIMIT ?", (query, limit)).fetchall()
        return [Fact(*row) for row in rows]

    def latest(self, limit: int) -> list[Fact]:
        """The ``limit`` most recently stored facts, newest first."""
        with self._connect() as conn:
            rows = conn.execute("SELECT id, content, tags, created_at FROM facts "
                                "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [Fact(*row) for row in rows]

    def forget(self, fact_id: int) -> bool:
        """Delete fact ``fact_id``; False if there was none."""
        with self._connect() as conn:
            return conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,)).rowcount == 1

    def count(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM facts").fetchone()[0])

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection for one operation, committed on success, always closed."""
        with closing(sqlite3.connect(self.path, timeout=self.busy_timeout)) as conn, conn:
            yield conn
