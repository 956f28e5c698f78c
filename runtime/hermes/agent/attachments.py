"""Images a user attaches to a turn (or a tool is handed): loaded, checked, shown.

Every front door (``hermes -z --image``, ``/image`` in chat, the API server's
``image_url`` parts, a platform's photo) turns what it got into an ``Attachment`` here
and hands the list to ``Conversation.run(text, images=...)``:

- ``from_bytes(data, source, limits)``: bytes a platform or client delivered;
- ``from_path(path, limits)``: a file the user named (their own path, read as is; a
  path the model chose goes through the file tools' rules: ``hermes.vision.tool``);
- ``from_data_url(url, limits)``: a ``data:image/...;base64,...`` URL;
- ``from_url(url, limits, fetch)``: an http(s) URL, fetched by ``fetch`` (the web
  fetcher, which keeps to the address rules).

The real type is sniffed from the bytes (PNG, JPEG, GIF, WebP; whatever the name or
the declared type says), the size is capped (``vision.max_bytes``) and so is the count
of one turn (``check_count``, ``vision.max_images``). Anything wrong is one line
(``ImageRefused``, a user error) naming the image and the fix.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.errors import UserError
from hermes.models.content import content_parts
from hermes.sessions.images import EXTENSIONS

KINDS = EXTENSIONS
"""The image types every vision API takes, and the file extension each is stored under."""
SUPPORTED = "PNG, JPEG, GIF or WebP"


class ImageRefused(UserError):
    """An image that cannot be attached: one line naming it and the fix."""


@dataclass(frozen=True)
class VisionLimits:
    """How much image a turn may carry (the ``vision`` config section)."""

    max_bytes: int = 20_000_000
    """Largest image accepted, in bytes."""
    max_images: int = 8
    """Most images on one turn."""

    @classmethod
    def from_config(cls, vision: Any) -> VisionLimits:
        """From ``cfg.vision`` (or None: the defaults)."""
        if vision is None:
            return cls()
        return cls(max_bytes=int(getattr(vision, "max_bytes", cls.max_bytes)),
                   max_images=int(getattr(vision, "max_images", cls.max_images)))


@dataclass(frozen=True)
class Attachment:
    """One checked image: its real type, its bytes and where it came from."""

    mime: str
    """The sniffed type: one of ``KINDS``."""
    data: bytes
    source: str
    """What the user or tool named (a path, a URL, ``photo.jpg``), for messages."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def extension(self) -> str:
        return KINDS[self.mime]

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def part(self) -> dict[str, Any]:
        """The chat-completions content part (every API mode is translated from it)."""
        return {"type": "image_url",
                "image_url": {"url": f"data:{self.mime};base64,{self.base64}"}}


def sniff(data: bytes) -> str | None:
    """The image type the bytes really are (one of ``KINDS``), else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _damage(mime: str, data: bytes) -> str | None:
    """Why ``data`` (of the sniffed type) is no whole image, else None."""
    if mime == "image/png":
        if data[12:16] != b"IHDR" or len(data) < 33:
            return "its PNG header is cut short"
        width, height = struct.unpack(">II", data[16:24])
        if not width or not height:
            return "it is a PNG of size 0"
        return None if b"IEND" in data[-16:] else "the PNG is cut short (no IEND)"
    if mime == "image/jpeg":
        return None if b"\xff\xd9" in data[-64:] else "the JPEG is cut short (no end marker)"
    if mime == "image/gif":
        return None if len(data) >= 14 and data.rstrip(b"\0").endswith(b";") \
            else "the GIF is cut short"
    size = struct.unpack("<I", data[4:8])[0] + 8 if len(data) >= 8 else 0
    return None if size <= len(data) and len(data) >= 16 else "the WebP is cut short"


def from_bytes(data: bytes, source: str, limits: VisionLimits) -> Attachment:
    """Check ``data`` as an image: size, real type, a whole file."""
    if not data:
        raise ImageRefused(f"{source}: the image is empty; attach a {SUPPORTED} file")
    if len(data) > limits.max_bytes:
        raise ImageRefused(f"{source}: the image is {len(data):,} bytes, more than "
                           f"vision.max_bytes ({limits.max_bytes:,}); attach a smaller one")
    mime = sniff(data)
    if mime is None:
        raise ImageRefused(f"{source}: not an image this runtime sends to models; "
                           f"attach a {SUPPORTED} file")
    damage = _damage(mime, data)
    if damage is not None:
        raise ImageRefused(f"{source}: unreadable image: {damage}; attach a whole file")
    return Attachment(mime, data, source)


def from_path(path: str | Path, limits: VisionLimits) -> Attachment:
    """An image file the user named (a CLI argument, a chat command), read as is. A path
    the model chose is read like ``read_file`` instead (``hermes.vision.tool``)."""
    named = Path(path).expanduser()
    try:
        size = named.stat().st_size
        if size > limits.max_bytes:
            raise ImageRefused(f"{path}: the image is {size:,} bytes, more than "
                               f"vision.max_bytes ({limits.max_bytes:,}); attach a smaller one")
        data = named.read_bytes()
    except FileNotFoundError:
        raise ImageRefused(f"{path}: no such file; name an existing image") from None
    except IsADirectoryError:
        raise ImageRefused(f"{path}: is a directory; name an image file") from None
    except OSError as exc:
        raise ImageRefused(f"{path}: cannot read it ({exc.strerror}); "
                           "name a readable image") from None
    return from_bytes(data, str(path), limits)


def from_data_url(url: str, limits: VisionLimits, source: str = "data: URL") -> Attachment:
    """A ``data:<type>;base64,<data>`` URL (the declared type is not trusted)."""
    head, comma, payload = url.partition(",")
    if not head.startswith("data:") or not comma or not head.endswith(";base64"):
        raise ImageRefused(f"{source}: not a base64 data URL; send "
                           "data:image/png;base64,... or an http(s) URL")
    if len(payload) > limits.max_bytes * 4 // 3 + 4:
        raise ImageRefused(f"{source}: the image is more than vision.max_bytes "
                           f"({limits.max_bytes:,}); attach a smaller one")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ImageRefused(f"{source}: the base64 data does not decode; "
                           "send the image's bytes base64-encoded") from None
    return from_bytes(data, source, limits)


Fetch = Callable[[str, int], bytes]
"""``fetch(url, max_bytes) -> body``: the web fetcher under the address rules (it raises
a user error for a refused address or a failed request)."""


def from_url(url: str, limits: VisionLimits, fetch: Fetch) -> Attachment:
    """An image at an http(s) URL (``data:`` URLs are decoded here, never fetched)."""
    from hermes.web.redaction import redact_url

    if url.startswith("data:"):
        return from_data_url(url, limits)
    # the source is shown to the model and kept in sessions: no token of the URL
    return from_bytes(fetch(url, limits.max_bytes), redact_url(url), limits)


def check_count(images: Sequence[Attachment], limits: VisionLimits) -> None:
    """Refuse more images on one turn than ``vision.max_images``."""
    if len(images) > limits.max_images:
        raise ImageRefused(f"{len(images)} images on one message; vision.max_images allows "
                           f"{limits.max_images}: send fewer")


def user_content(text: str, images: Sequence[Attachment]) -> str | list[dict[str, Any]]:
    """A user message's content: the text alone, or its text part (none for no text: a
    photo without a caption) and one part per image (the chat-completions shape every
    API mode is translated from)."""
    if not images:
        return text
    words = [{"type": "text", "text": text}] if text.strip() else []
    return [*words, *(image.part() for image in images)]


def content_images(content: Any, limits: VisionLimits) -> tuple[str, list[Attachment]]:
    """A message's text and its images, read back from ``user_content``'s shape (the
    images' ``data:`` URLs checked again: ``ImageRefused`` for a bad one)."""
    texts, images = [], []
    for kind, value in content_parts(content):
        if kind == "image":
            images.append(from_data_url(value, limits))
        else:
            texts.append(value)
    return "\n".join(texts), images
