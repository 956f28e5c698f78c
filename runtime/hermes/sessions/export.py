"""Render one session as JSONL (lossless, machine-readable) or Markdown (for people)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from hermes.sessions.models import Session

ExportFormat = Literal["jsonl", "md"]


def to_jsonl(session: Session, messages: list[dict[str, Any]]) -> str:
    """One ``{"type": "session", ...}`` line, then one ``{"type": "message", ...}`` per message."""
    lines = [json.dumps({"type": "session", **session.as_dict()}, ensure_ascii=False)]
    lines += [json.dumps({"type": "message", **message}, ensure_ascii=False)
              for message in messages]
    return "\n".join(lines) + "\n"


def timestamp(seconds: float | None) -> str:
    """UTC, to the second; ``-`` for a missing time."""
    if seconds is None:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _fence(text: str) -> str:
    # A fence longer than any backtick run inside, so the content cannot close it.
    ticks = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{ticks}\n{text}\n{ticks}"


def _longest_backtick_run(text: str) -> int:
    best = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        best = max(best, run)
    return best


def _header(session: Session) -> list[str]:
    tokens = f"{session.input_tokens} in / {session.output_tokens} out"
    if session.cache_read_tokens or session.cache_write_tokens:
        tokens += f" / {session.cache_read_tokens} cache read / {session.cache_write_tokens} " \
                  "cache write"
    ended = timestamp(session.ended_at) + (f" ({session.end_reason})" if session.end_reason
                                           else "")
    rows = [("id", session.id), ("source", session.source), ("model", session.model or "-"),
            ("started", timestamp(session.started_at)), ("ended", ended),
            ("parent", session.parent_id or "-"), ("messages", str(session.message_count)),
            ("tokens", tokens), ("cost", cost(session.cost_usd))]
    return [f"# {session.title or 'Session ' + session.id}", ""] + \
        [f"- **{key}:** {value}" for key, value in rows] + [""]


def _message(message: dict[str, Any]) -> list[str]:
    role = message["role"] + (f" ({message['tool_name']})" if message.get("tool_name") else "")
    lines = [f"## {role} · {timestamp(message['created_at'])}", ""]
    if message.get("reasoning"):
        lines += ["> " + line for line in message["reasoning"].splitlines()] + [""]
    if message.get("content"):
        lines += [message["content"], ""]
    if message.get("tool_calls"):
        lines += ["Tool calls:", "", _fence(json.dumps(message["tool_calls"], indent=2,
                                                        ensure_ascii=False)), ""]
    return lines


def to_markdown(session: Session, messages: list[dict[str, Any]]) -> str:
    """A readable transcript: a metadata list, then one section per message."""
    lines = _header(session)
    if session.system_prompt:
        lines += ["## system prompt", "", _fence(session.system_prompt), ""]
    for message in messages:
        lines += _message(message)
    return "\n".join(lines).rstrip("\n") + "\n"


def render(session: Session, messages: list[dict[str, Any]], fmt: ExportFormat) -> str:
    return to_jsonl(session, messages) if fmt == "jsonl" else to_markdown(session, messages)
