"""Anthropic prompt caching: breakpoints on the system prompt and the last 3 messages."""

from __future__ import annotations

import copy
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # Anthropic allows four: the system prompt plus the last three messages


def with_cache_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``cache_control`` marks; the input is never changed."""
    marked = copy.deepcopy(messages)
    targets = [i for i, m in enumerate(marked) if m.get("role") == "system"][:1]
    rest = [i for i, m in enumerate(marked) if m.get("role") != "system"]
    targets += rest[-(MAX_BREAKPOINTS - len(targets)):]
    for index in targets:
        _mark(marked[index])
    return marked


def _mark(message: dict[str, Any]) -> None:
    content = message.get("content")
    if isinstance(content, str) and content:
        message["content"] = [{"type": "text", "text": content, "cache_control": EPHEMERAL}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        content[-1]["cache_control"] = EPHEMERAL
    elif message.get("role") == "assistant" and message.get("tool_calls"):
        message["cache_control"] = EPHEMERAL
