"""Images in a client's conversation: ``image_url`` parts of chat completions and
``input_image`` parts of Responses input, as ``data:`` URLs or http(s) URLs (fetched under
the profile's ``web`` address rules), checked against ``vision.*``. A bad image is a 400
naming the message (``messages.2.content: ...``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes.agent.attachments import (
    Attachment,
    ImageRefused,
    VisionLimits,
    check_count,
    user_content,
)
from hermes.gateway.api_server.request_models import split_conversation
from hermes.gateway.api_server.wire import WireError
from hermes.vision.fetch import image_at

Message = tuple[str, str, list[str]]
"""A client message: its role, its text and its images' URLs."""


def split_with_images(messages: Sequence[Message], where: str, settings: Any
                      ) -> tuple[str | None, list[dict[str, Any]], str, list[Attachment]]:
    """``(instructions, history, last user text, its images)``; earlier user messages'
    images stay in the history (blocking: fetches URLs; call from a worker thread)."""
    for index, (role, _, urls) in enumerate(messages):
        if urls and role != "user":
            raise WireError(400, f"{where}.{index}.content: only user messages may carry "
                                 "images", param=f"{where}.{index}.content")
    turns = [(index, urls) for index, (role, _, urls) in enumerate(messages)
             if role in ("user", "assistant")]
    instructions, history, text = split_conversation(
        [(role, text) for role, text, _ in messages], where,
        empty_last=bool(turns and turns[-1][1]))
    loaded = [_load(urls, f"{where}.{index}.content", settings) for index, urls in turns]
    for message, images in zip(history, loaded[:-1], strict=True):
        if images:
            message["content"] = user_content(message["content"], images)
    return instructions, history, text, loaded[-1]


def _load(urls: list[str], where: str, settings: Any) -> list[Attachment]:
    if not urls:
        return []
    limits = VisionLimits.from_config(settings.vision)
    try:
        images = [image_at(url, limits, getattr(settings, "web", None)) for url in urls]
        check_count(images, limits)
    except ImageRefused as exc:
        raise WireError(400, f"{where}: {exc}", param=where, code="invalid_image") from exc
    return images
