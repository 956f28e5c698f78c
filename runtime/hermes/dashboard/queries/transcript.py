"""A session's transcript for the page: messages in order, each assistant message with
its tool calls and their results beside them, so the page can fold a call and its
result as one unit."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hermes.sessions import Session, SessionError, SessionStore


@dataclass
class ToolCall:
    """One call the model made and the tool's answer to it."""

    id: str | None
    name: str
    arguments: str
    """As the model wrote them (usually JSON text)."""
    result: dict[str, Any] | None = None
    """The ``tool`` message answering it; ``None`` if none was stored (interrupted)."""


@dataclass
class Entry:
    """One message of the transcript; an assistant message carries its tool calls."""

    message: dict[str, Any]
    """The stored row (``SessionStore.messages``): role, content, reasoning, times, ..."""
    calls: list[ToolCall] = field(default_factory=list)


@dataclass(frozen=True)
class Transcript:
    session: Session
    entries: list[Entry]
    next_after: int | None = None
    """Pass as ``after`` for the rest; ``None`` when this is the end."""
    earlier_before: int | None = None
    """Pass as ``before`` to ``latest`` for the part before this one; ``None`` when this
    starts the session."""


SPILL = 64
"""Tool results read past a part's ``limit`` so that a call and its results stay together."""


def transcript(db: SessionStore, session_id: str, *, after: int = 0,
               limit: int | None = None) -> Transcript:
    """``session_id``'s (an id or unique prefix) messages, tool results grouped under the
    calls they answer; ``SessionNotFound`` if there is no such session. With ``limit``,
    one part of a long transcript: about ``limit`` messages after the message id ``after``
    (the tool results of its last calls come along)."""
    if limit is not None and limit < 1:
        raise SessionError(f"transcript part size {limit} is out of range; give 1 or more")
    full_id = db.resolve_id(session_id)
    session = db.get_session(full_id)
    if limit is None:
        return Transcript(session, group(db.messages(full_id, after=after)))
    rows = db.messages(full_id, after=after, limit=limit + SPILL)
    cut = next((i for i in range(limit, len(rows)) if rows[i]["role"] != "tool"), len(rows))
    more = cut < len(rows) or len(rows) == limit + SPILL
    return Transcript(session, group(rows[:cut]), rows[cut - 1]["id"] if more else None)


def latest(db: SessionStore, session_id: str, *, limit: int, before: int | None = None
           ) -> Transcript:
    """The last part of ``session_id``'s transcript: about its ``limit`` latest messages
    (before the message id ``before``, if given), starting at a call rather than at its
    results so that they stay together."""
    if limit < 1:
        raise SessionError(f"transcript part size {limit} is out of range; give 1 or more")
    full_id = db.resolve_id(session_id)
    session = db.get_session(full_id)
    rows = db.messages(full_id, before=before, limit=limit + SPILL, last=True)
    start = max(len(rows) - limit, 0)
    while start > 0 and rows[start]["role"] == "tool":
        start -= 1
    more = start > 0 or len(rows) == limit + SPILL
    return Transcript(session, group(rows[start:]),
                      earlier_before=rows[start]["id"] if more and rows else None)


def group(messages: list[dict[str, Any]]) -> list[Entry]:
    """Entries of ``messages``: a ``tool`` message answering an earlier call goes under
    that call; one answering nothing known stays an entry of its own."""
    entries: list[Entry] = []
    open_calls: dict[str, ToolCall] = {}
    for message in messages:
        call = open_calls.pop(message.get("tool_call_id") or "", None) \
            if message["role"] == "tool" else None
        if call is not None:  # popped: a second answer to one call stays an entry
            call.result = message
            continue
        entry = Entry(message, [_call(raw) for raw in message.get("tool_calls") or []])
        open_calls.update((c.id, c) for c in entry.calls if c.id)
        entries.append(entry)
    return entries


def _call(raw: Any) -> ToolCall:
    """A stored call in the OpenAI wire shape (``{"id", "function": {"name",
    "arguments"}}``), tolerating a flat ``{"name", "arguments"}``."""
    raw = raw if isinstance(raw, dict) else {"name": str(raw)}
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(raw.get("id"), str(function.get("name") or "?"), arguments)
