"""Cheap token estimates of a transcript, and the model's context window.

The estimate is characters / 4 per message plus a small per-message overhead.
``litellm.token_counter`` was measured at ~450 ms for its first call (tokenizer
load) and ~4 ms per 100 messages after that — over the loop's 2 ms budget per
iteration — while characters / 4 costs well under a microsecond per message. It
overestimates English prose by about a third, which errs towards compressing early.
``TokenMeter`` counts each appended message once, so a check costs O(new messages).
"""

from __future__ import annotations

import json
from typing import Any

from hermes.models.base import ModelClient

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
"""Tokens of role and separators around each message."""
NON_TEXT_PART_TOKENS = 800
"""A guess for an image or other non-text content part."""
DEFAULT_CONTEXT_WINDOW = 32_768
"""Used when litellm does not know the model and no window is configured: small
enough for most local models, and a provider's overflow error corrects it anyway."""


def estimate_text(text: str) -> int:
    """Tokens of a piece of text."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_json(value: Any) -> int:
    """Tokens of a JSON-serialisable value (e.g. the tool schemas sent with each call)."""
    return estimate_text(json.dumps(value, separators=(",", ":"), default=str))


def estimate_tokens(message: dict[str, Any]) -> int:
    """Tokens of one OpenAI-style message: content, tool calls and overhead."""
    tokens = MESSAGE_OVERHEAD + _content_tokens(message.get("content"))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        tokens += MESSAGE_OVERHEAD + estimate_text(str(function.get("name") or ""))
        tokens += estimate_text(str(function.get("arguments") or ""))
    return tokens


def _content_tokens(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_text(content)
    if isinstance(content, list):
        return sum(estimate_text(part["text"]) if isinstance(part, dict)
                   and isinstance(part.get("text"), str) else NON_TEXT_PART_TOKENS
                   for part in content)
    return estimate_text(str(content))


class TokenMeter:
    """The estimate of one growing transcript, kept up to date incrementally.

    The transcript only grows by appending until it is replaced by a new list
    (compression); a new list, or one that no longer extends what was counted, is
    counted again from scratch.
    """

    def __init__(self) -> None:
        self._messages: list[dict[str, Any]] | None = None
        self._counted = 0
        self._last: dict[str, Any] | None = None
        self._total = 0

    def measure(self, messages: list[dict[str, Any]]) -> int:
        """The estimated tokens of ``messages``."""
        if not self._extends_counted(messages):
            self._messages, self._counted, self._total = messages, 0, 0
        for message in messages[self._counted:]:
            self._total += estimate_tokens(message)
        self._counted = len(messages)
        self._last = messages[-1] if messages else None
        return self._total

    def _extends_counted(self, messages: list[dict[str, Any]]) -> bool:
        return (messages is self._messages and len(messages) >= self._counted
                and (self._counted == 0 or messages[self._counted - 1] is self._last))


def context_window(model: ModelClient, override: int | None = None) -> int:
    """The model's input window in tokens: ``override``, else what litellm's model data
    says (``ModelClient.input_window``), else ``DEFAULT_CONTEXT_WINDOW``."""
    return override or model.input_window() or DEFAULT_CONTEXT_WINDOW
