"""The rows the session store writes: message tuples, session totals, deletions.

Kept apart from ``store`` so that the store reads as its public API.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from hermes.sessions.errors import SessionError
from hermes.sessions.models import UsageLike

MAX_TITLE_CHARS = 200
MESSAGE_FIELDS = ("tool_calls", "tool_call_id", "tool_name", "reasoning", "finish_reason",
                  "usage", "images", "created_at")
INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name, "
    "reasoning, input_tokens, output_tokens, finish_reason, images, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
# cost_usd + NULL is NULL: once one call is unpriced the total stays unknown.
ADD_TOTALS = (
    "UPDATE sessions SET message_count = message_count + ?, "
    "updated_at = max(coalesce(updated_at, 0), ?), input_tokens = input_tokens + ?, "
    "output_tokens = output_tokens + ?, cache_read_tokens = cache_read_tokens + ?, "
    "cache_write_tokens = cache_write_tokens + ?, reasoning_tokens = reasoning_tokens + ?, "
    "cost_usd = CASE WHEN ? THEN cost_usd + ? ELSE cost_usd END WHERE id = ?")


def clean_text(value: str | None) -> str | None:
    """Replace lone surrogates (e.g. undecodable tool output): SQLite cannot store them."""
    return value.encode("utf-8", "replace").decode("utf-8") if value is not None else None


class Totals:
    """Sums of what a batch of messages adds to its session's row."""

    def __init__(self) -> None:
        self.messages = 0
        self.tokens = [0, 0, 0, 0, 0]
        self.has_usage = False  # without usage the cost is left alone
        self.cost: float | None = 0.0

    def add(self, usage: UsageLike | None, messages: int = 1) -> Totals:
        self.messages += messages
        if usage is not None:
            self.has_usage = True
            self.tokens = [a + b for a, b in zip(self.tokens, _token_values(usage), strict=True)]
            self.cost = None if self.cost is None or usage.cost_usd is None \
                else self.cost + usage.cost_usd
        return self

    def params(self, session_id: str, now: float) -> list[Any]:
        return [self.messages, now, *self.tokens, self.has_usage, self.cost, session_id]


def _token_values(usage: UsageLike) -> list[int]:
    return [usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens, usage.reasoning_tokens]


def clean_title(title: str) -> str:
    """One line of at most ``MAX_TITLE_CHARS``, whitespace collapsed; else ``SessionError``."""
    cleaned = " ".join(title.split())
    if not cleaned:
        raise SessionError("the title is empty; give at least one visible character")
    if len(cleaned) > MAX_TITLE_CHARS:
        raise SessionError(f"the title is {len(cleaned)} characters long; at most "
                           f"{MAX_TITLE_CHARS} are allowed")
    return cleaned


def message_row(session_id: str, role: str, content: str | None, *, tool_calls: Any = None,
                 tool_call_id: str | None = None, tool_name: str | None = None,
                 reasoning: str | None = None, finish_reason: str | None = None,
                 usage: UsageLike | None = None, images: Sequence[str] = (),
                 created_at: float | None = None) -> list[Any]:
    """The parameters of ``INSERT_MESSAGE``; ``created_at`` (now by default) comes last.
    ``images``: the file names of the message's stored images (``sessions.images``)."""
    calls = json.dumps(tool_calls, ensure_ascii=False) if tool_calls else None
    return [session_id, role, clean_text(content), clean_text(calls), tool_call_id, tool_name,
            clean_text(reasoning), usage.input_tokens if usage else None,
            usage.output_tokens if usage else None, finish_reason,
            json.dumps(list(images)) if images else None,
            time.time() if created_at is None else created_at]


def delete_session(conn: sqlite3.Connection, session_id: str, condition: str = "",
                   params: Iterable[Any] = ()) -> int | None:
    """Inside a transaction: delete one session (if ``condition`` holds).

    Returns the number of its messages deleted (their index rows go with them, by trigger),
    or ``None`` if there was no such session. Its continuations are re-attached to its
    parent so that lineage stays connected.
    """
    row = conn.execute(f"SELECT parent_id FROM sessions WHERE id = ?{condition}",
                       [session_id, *params]).fetchone()
    if row is None:
        return None
    conn.execute("UPDATE sessions SET parent_id = ? WHERE parent_id = ?", [row[0], session_id])
    deleted = conn.execute("DELETE FROM messages WHERE session_id = ?", [session_id]).rowcount
    conn.execute("DELETE FROM sessions WHERE id = ?", [session_id])
    return int(deleted)


def delete_messages_after(conn: sqlite3.Connection, session_id: str, message_id: int
                          ) -> int | None:
    """Inside a transaction: delete ``session_id``'s messages after ``message_id`` (all of
    them for 0). Their index rows go with them (by trigger) and the message count drops;
    the usage totals stay, since those tokens were spent. ``None`` if no such session."""
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id]).fetchone() is None:
        return None
    deleted = int(conn.execute("DELETE FROM messages WHERE session_id = ? AND id > ?",
                               [session_id, message_id]).rowcount)
    conn.execute("UPDATE sessions SET message_count = max(message_count - ?, 0), "
                 "updated_at = max(coalesce(updated_at, 0), ?) WHERE id = ?",
                 [deleted, time.time(), session_id])
    return deleted


STALE = "coalesce(updated_at, started_at) < ?"


def delete_stale(conn: sqlite3.Connection, session_ids: list[str], cutoff: float
                 ) -> list[str]:
    """Inside a transaction: delete those of ``session_ids`` still idle since ``cutoff``."""
    return [sid for sid in session_ids
            if delete_session(conn, sid, f" AND {STALE}", [cutoff]) is not None]
