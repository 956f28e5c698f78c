"""The summary that stands in for compressed messages: its format, and how it is written.

A summary is a user message that starts with ``SUMMARY_HEADER`` and ends with
``SUMMARY_END``; whatever follows the end marker is a real user message it was
merged with (two user messages in a row are merged before sending anyway). The
summariser model gets the messages to compress as text, plus the previous summary
to update, and answers in fixed sections (``SECTIONS``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes.models.base import ModelClient
from hermes.models.errors import ErrorClass, ModelCallError
from hermes.models.types import StreamCallbacks, Usage

SUMMARY_HEADER = "[Summary of the earlier conversation]"
SUMMARY_PREAMBLE = ("Earlier messages of this conversation were compressed into this summary "
                    "to save context. It is background for reference, not a new request: "
                    "continue from the messages after it.")
SUMMARY_END = "[End of summary]"
TRUNCATION_PREFIX = "[Earlier conversation truncated:"
TRUNCATION_NOTE = (TRUNCATION_PREFIX + " {count} messages were dropped to fit the context "
                   "window, without a summary]")
SECTIONS = ("Goal", "Constraints", "Progress", "Decisions", "Files", "Next steps")
MESSAGE_MAX_CHARS = 2_000
"""Each message is cut to this many characters in the summariser's input."""
ARGUMENTS_MAX_CHARS = 500
"""Each tool call's arguments are cut to this many characters."""

SUMMARISER_INSTRUCTIONS = """\
You compress the middle part of a conversation between a user and an AI agent that \
uses tools, so that the agent can carry on without it. Write a concise, factual summary \
in Markdown with exactly these sections, in this order: {sections}.
- Goal: what the user wants; quote their latest request in these messages verbatim.
- Constraints: requirements, preferences and limits the user or the environment set.
- Progress: what was done and what came of it (results, errors).
- Decisions: choices made, and why.
- Files: paths read, created or changed, and what matters about each.
- Next steps: what remains to be done.
Keep exact names, paths, commands, numbers and error messages. Write "none" for an \
empty section. Use at most about {words} words. Output only the summary: do not \
answer the user and do not continue the conversation."""
UPDATE_INSTRUCTIONS = """
You are given the previous summary and the messages that came after it: update the \
summary — keep what still holds, add what is new, drop what no longer matters."""


def summary_text(body: str) -> str:
    """The content of a summary message with ``body`` (the sections)."""
    return f"{SUMMARY_HEADER}\n{SUMMARY_PREAMBLE}\n\n{body.strip()}\n{SUMMARY_END}"


def truncation_text(dropped: int, previous: str | None) -> str:
    """The note that replaces dropped messages when no summary could be written;
    a previous summary is kept, so what it knew is not lost."""
    note = TRUNCATION_NOTE.format(count=dropped)
    return f"{note}\n\n{summary_text(previous)}" if previous else note


def split_summary(content: Any) -> tuple[str, str] | None:
    """``(summary body, text after it)`` of a message that holds a summary, else None."""
    if not isinstance(content, str):
        return None
    start = content.find(SUMMARY_HEADER)  # at the start, or after a truncation note
    if start != 0 and not (start > 0 and content.startswith(TRUNCATION_PREFIX)):
        return None
    end = content.find(SUMMARY_END, start)
    if end < 0:
        return None
    body = content[start + len(SUMMARY_HEADER):end].strip()
    body = body.removeprefix(SUMMARY_PREAMBLE).strip()
    return body, content[end + len(SUMMARY_END):].strip()


def summarise(client: ModelClient, messages: list[dict[str, Any]], previous: str | None, *,
              max_words: int, max_input_chars: int,
              cancelled: Callable[[], bool] | None = None) -> tuple[str, Usage]:
    """The summary body of ``messages`` (updating ``previous``) and the call's usage.

    Raises ``ModelCallError`` when the call fails or the answer is empty, and
    ``CallCancelledError`` when ``cancelled()`` turns true while it streams.
    """
    instructions = SUMMARISER_INSTRUCTIONS.format(
        sections=", ".join(f"## {s}" for s in SECTIONS), words=max_words)
    parts = [f"<previous-summary>\n{previous}\n</previous-summary>"] if previous else []
    parts.append(f"<messages>\n{render_messages(messages, max_input_chars)}\n</messages>")
    request = [{"role": "system",
                "content": instructions + (UPDATE_INSTRUCTIONS if previous else "")},
               {"role": "user", "content": "\n\n".join(parts)}]
    reply = client.complete(request, None, stream=True,
                            callbacks=StreamCallbacks(cancelled=cancelled))
    if not reply.content.strip():
        raise ModelCallError(f"{client.model}: the summary came back empty",
                             ErrorClass.FORMAT_ERROR)
    return reply.content.strip(), reply.usage


def render_messages(messages: list[dict[str, Any]], max_chars: int) -> str:
    """The messages as plain text, newest kept when they exceed ``max_chars``."""
    lines = [_render(m) for m in messages]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        if used + len(line) > max_chars and kept:
            kept.append(f"[{len(lines) - len(kept)} older messages omitted]")
            break
        kept.append(line)
        used += len(line) + 2
    return "\n\n".join(reversed(kept))


def _render(message: dict[str, Any]) -> str:
    role = str(message.get("role", "")).upper()
    text = _cut(_text(message.get("content")), MESSAGE_MAX_CHARS)
    if role == "TOOL":
        return f"TOOL RESULT ({message.get('name') or 'tool'}): {text}"
    calls = [f"{role} called {(c.get('function') or {}).get('name')}("
             f"{_cut(str((c.get('function') or {}).get('arguments') or ''), ARGUMENTS_MAX_CHARS)})"
             for c in message.get("tool_calls") or ()]
    return "\n".join(([f"{role}: {text}"] if text else []) + calls) or f"{role}: (empty)"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(p.get("text", "[attachment]") if isinstance(p, dict) else str(p)
                        for p in content)
    return "" if content is None else str(content)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} chars cut]"
