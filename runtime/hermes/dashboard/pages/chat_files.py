"""What the Chat page attaches to a message: images and text files.

The page sends every file it was given as ``{"name": ..., "data": <data: URL>}``; the
bytes decide what it is (the browser's declared type is not trusted): an image
(``hermes.agent.attachments.sniff``) goes to the model as an image, checked in the turn
like every front door's (``vision.*``); anything else must be a text file
(``hermes.agent.text_files``), inlined fenced into the message; a binary file or too much
text is refused here in one line, before a session is opened or a model asked.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from hermes.agent.attachments import sniff
from hermes.agent.text_files import FileRefused, TextFile, check_total, text_file

Image = tuple[str, str]
"""An attached image: its name and its ``data:`` URL (checked in the turn)."""


def attachments_of(body: dict[str, Any]) -> tuple[tuple[Image, ...], tuple[TextFile, ...]]:
    """The images and text files of a ``/turn`` request (``images``: bare ``data:`` URLs,
    as an API client may send them; ``files``: the page's named files). ``ValueError``
    for a malformed request, ``FileRefused`` for a file that cannot be attached."""
    images, files = body.get("images") or [], body.get("files") or []
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        raise ValueError("images: a list of data: URLs")
    if not isinstance(files, list) or not all(_is_file(f) for f in files):
        raise ValueError('files: a list of {"name": ..., "data": <data: URL>}')
    named: list[Image] = [(f"image {n}", url) for n, url in enumerate(images, 1)]
    texts: list[TextFile] = []
    for file in files:
        name, url = file["name"] or "file", file["data"]
        if sniff(_head(name, url)) is not None:
            named.append((name, url))
        else:
            texts.append(text_file(name, _decoded(name, url)))
    check_total(texts)
    return tuple(named), tuple(texts)


def _is_file(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("name"), str)
            and isinstance(value.get("data"), str))


def _payload(name: str, url: str) -> str:
    head, _, payload = url.partition(",")
    if not head.startswith("data:") or (payload and not head.endswith(";base64")):
        raise FileRefused(f"{name}: not a base64 data: URL; attach the file again")
    return payload


def _head(name: str, url: str) -> bytes:
    """The first bytes of the file, enough to tell an image (the rest is not decoded)."""
    return _bytes(name, _payload(name, url)[:16])


def _decoded(name: str, url: str) -> bytes:
    return _bytes(name, _payload(name, url))


def _bytes(name: str, payload: str) -> bytes:
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise FileRefused(f"{name}: its base64 data does not decode; "
                          "attach the file again") from None
