"""Images in a client's conversation: ``image_url`` parts of chat completions and
``input_image`` parts of Responses input, as ``data:`` URLs or http(s) URLs (fetched under
the profile's ``web`` address rules), checked against ``vision.*``. A bad image is a 400
naming the message (``messages.2.content: ...``). Earlier messages' images start the
session as they are, or, for a model without vision, described by ``vision.model``
(``hermes.agent.seeing.history_for_model``); with neither, a 400 naming the message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes.agent.attachments import (
    Attachment,
    ImageRefused,
    VisionLimits,
    check_count,
    user_content,
)
from hermes.agent.seeing import EarlierImagesRefused
from hermes.gateway.api_server.request_models import split_conversation
from hermes.gateway.api_server.wire import WireError
from hermes.vision.fetch import image_at

Message = tuple[str, str, list[str]]
"""A client message: its role, its text and its images' URLs."""


@dataclass(frozen=True)
class Earlier:
    """The client's messages before its last user message, as a new session starts."""

    messages: list[dict[str, Any]]
    where: list[str]
    """Where each message is in the request (``messages.2.content``), for errors."""

    def refused(self, exc: EarlierImagesRefused) -> WireError:
        """The 400 for images of an earlier message that no model here can look at."""
        where = self.where[exc.index]
        return WireError(400, f"{where}: {exc.reason}", param=where, code="invalid_image")


def split_with_images(messages: Sequence[Message], where: str, settings: Any
                      ) -> tuple[str | None, Earlier, str, list[Attachment]]:
    """``(instructions, earlier messages, last user text, its images)``; earlier user
    messages' images stay in them (blocking: fetches URLs; call from a worker thread)."""
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
    earlier = Earlier(history, [f"{where}.{index}.content" for index, _ in turns[:-1]])
    return instructions, earlier, text, loaded[-1]


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
