"""Images a chat platform received (a Telegram photo, a Matrix ``m.image``, a mail's image
part), fetched only once the gateway let the sender in.

A platform puts an ``IncomingImage`` on the ``MessageEvent`` for each image: its name,
what the platform declares (size, type) and how to download it. Nothing is downloaded
when the event is built: the allowlist and pairing (``Gate``) run first, and only an
allowed sender's images are fetched, by the router, with ``fetch_images``. A declared
size over ``vision.max_bytes`` or a declared type that is no image is refused before
any download; the download itself stops as soon as it passes ``vision.max_bytes``; the
bytes are then checked like every front door's (``hermes.agent.attachments``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from hermes.agent.attachments import (
    KINDS,
    SUPPORTED,
    Attachment,
    ImageRefused,
    VisionLimits,
    from_bytes,
)

Fetch = Callable[[int], Awaitable[bytes]]
"""``fetch(max_bytes) -> bytes`` through the platform's own API; raises ``ImageRefused``
past ``max_bytes`` or when the image cannot be had."""
UNTYPED = frozenset({"", "application/octet-stream"})
"""Declared types that say nothing: the bytes decide."""


@dataclass(frozen=True)
class IncomingImage:
    """One image (or image-like file) a message carries, not downloaded yet."""

    name: str
    """How the user knows it (a file name, ``photo``), for the one-line refusals."""
    fetch: Fetch
    size: int | None = None
    """The size the platform declares, if any."""
    mime: str = ""
    """The type the platform declares (lower case), if any."""


async def fetch_images(images: Sequence[IncomingImage], limits: VisionLimits
                       ) -> list[Attachment]:
    """Every image downloaded and checked, in order; ``ImageRefused`` (one line naming
    the image and the fix) for the first that cannot be attached."""
    if len(images) > limits.max_images:
        raise ImageRefused(f"{len(images)} images on one message; vision.max_images allows "
                           f"{limits.max_images}: send fewer")
    for image in images:
        _check_declared(image, limits)
    return [from_bytes(await image.fetch(limits.max_bytes), image.name, limits)
            for image in images]


def _check_declared(image: IncomingImage, limits: VisionLimits) -> None:
    if image.mime not in UNTYPED and image.mime not in KINDS:
        what = "images are not read here" if image.mime.startswith("image/") else \
            "is no image"
        raise ImageRefused(f"{image.name}: {image.mime} {what}; send a {SUPPORTED} image")
    if image.size is not None and image.size > limits.max_bytes:
        raise ImageRefused(too_large(image.name, limits.max_bytes, image.size))


def too_large(name: str, max_bytes: int, size: int | None = None) -> str:
    """The refusal of an image over ``vision.max_bytes`` (its size when known)."""
    what = f"{size:,} bytes" if size is not None else f"more than {max_bytes:,} bytes"
    return (f"{name}: the image is {what}, over vision.max_bytes ({max_bytes:,}); "
            "send a smaller one")


async def read_capped(chunks: AsyncIterator[bytes], max_bytes: int, name: str) -> bytes:
    """A download's body, given in ``chunks``; refused as soon as it passes ``max_bytes``."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > max_bytes:
            raise ImageRefused(too_large(name, max_bytes))
    return bytes(body)


def unreadable(name: str, platform: str, why: str) -> ImageRefused:
    """The refusal of an image the platform did not hand over."""
    return ImageRefused(f"{name}: could not download it from {platform} ({why}); "
                        "send it again")
