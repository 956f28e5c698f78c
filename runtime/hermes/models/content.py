"""A chat-completions message's content parts, read one way for every reader (the
Responses wire, the images read back from a stored message)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

Kind = Literal["text", "image"]


def content_parts(content: Any) -> Iterator[tuple[Kind, str]]:
    """``("text", text)`` and ``("image", url)`` for each text and ``image_url`` part of
    ``content`` in order (a plain string is one text part); other parts are skipped."""
    if not isinstance(content, list):
        yield "text", str(content or "")
        return
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            image = part.get("image_url")
            yield "image", str((image.get("url") if isinstance(image, dict) else image) or "")
        elif part.get("type") == "text":
            yield "text", str(part.get("text") or "")
