"""Long answers split for platforms with a message size limit."""

from __future__ import annotations

import re
from collections.abc import Callable

Measure = Callable[[str], int]
"""The size of a text, additive (``measure(a + b) == measure(a) + measure(b)``)."""
SEPARATORS = ("\n\n", "\n", " ")


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units: how Telegram (and JavaScript clients) count."""
    return len(text.encode("utf-16-le")) // 2


def split_text(text: str, limit: int, measure: Measure = len) -> list[str]:
    """``text`` in parts of at most ``limit`` (by ``measure``): cut at paragraph breaks
    where possible, else at line breaks, else at spaces, else anywhere (never inside a
    character). Only the breaks the text was cut at are dropped; blank parts are too."""
    if limit < 1:
        raise ValueError("limit must be positive")
    parts: list[str] = []
    _split(text, limit, measure, SEPARATORS, parts)
    return [part for part in parts if part.strip()]


def _split(text: str, limit: int, measure: Measure, separators: tuple[str, ...],
           parts: list[str]) -> None:
    if measure(text) <= limit:
        parts.append(text)
        return
    if not separators:
        parts.extend(_hard_cut(text, limit, measure))
        return
    separator, finer = separators[0], separators[1:]
    gap = measure(separator)
    current, size = "", 0
    for piece in re.split(f"(?:{re.escape(separator)})+", text):
        piece_size = measure(piece)
        if current and size + gap + piece_size <= limit:
            current, size = f"{current}{separator}{piece}", size + gap + piece_size
            continue
        if current:
            parts.append(current)
        if piece_size <= limit:
            current, size = piece, piece_size
        else:
            _split(piece, limit, measure, finer, parts)
            current, size = "", 0
    if current:
        parts.append(current)


def _hard_cut(text: str, limit: int, measure: Measure) -> list[str]:
    parts: list[str] = []
    start, size = 0, 0
    for index, char in enumerate(text):
        width = measure(char)
        if size + width > limit and index > start:
            parts.append(text[start:index])
            start, size = index, 0
        size += width
    parts.append(text[start:])
    return parts
