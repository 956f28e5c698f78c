"""Answers as Discord shows them: Discord renders the Markdown models write (bold, italics,
code, headings, lists, links) as it is, so the text is sent unchanged except where it would
go wrong there:

- a part of a split answer ending inside a fenced code block is closed there, and the next
  part reopens it (same language), so no part shows the rest of the answer as code;
- ``@everyone`` and ``@here`` are shown, not sent (every message also refuses all pings).
"""

from __future__ import annotations

import re

from hermes.gateway.messaging.text import split_text

FENCE = re.compile(r"^[ \t]*```([\w+#.-]{0,16})", re.MULTILINE)
RESERVED = 32
"""Characters kept free in each part for a closing and a reopening fence."""


def split_markdown(text: str, limit: int) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, code blocks closed and reopened
    across the cuts."""
    parts: list[str] = []
    reopen: str | None = None
    for part in split_text(text, limit - RESERVED):
        if reopen is not None:
            part = f"```{reopen}\n{part}"
        reopen = _open_fence(part)
        parts.append(part if reopen is None else f"{part}\n```")
    return parts


def _open_fence(text: str) -> str | None:
    """The language of a code block ``text`` leaves open ("" for none given), else None."""
    language: str | None = None
    for match in FENCE.finditer(text):
        language = match[1] if language is None else None
    return language


def escape_mentions(text: str) -> str:
    """``@everyone`` and ``@here`` shown, not sent."""
    return re.sub(r"@(everyone|here)\b", "@\u200b\\1", text)
