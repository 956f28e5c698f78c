"""Images of stored messages, kept by reference: one file per image in the home
(``sessions/images/<sha256>.<ext>``, 0600, the same image stored once), and the message
row holds the file's name (``messages.images``, a JSON list), not a base64 blob.

``ImageFiles.keep(content)`` splits a message's content into the text the row keeps and
the names of the images it stored; ``ImageFiles.content(text, names)`` puts the message
back together for the model when a session is resumed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes.errors import disk_full
from hermes.fsutil import private_dir

EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
              "image/webp": "webp"}
TYPES = {extension: mime for mime, extension in EXTENSIONS.items()}
NAME = re.compile(r"[0-9a-f]{64}\.(png|jpg|gif|webp)")
"""A stored image's file name: nothing else is ever read back from the directory."""
GRACE = 60.0
"""Seconds a stored image is kept after it was last written or reused, named or not."""
DATA_URL = re.compile(r"data:(image/[a-z]+);base64,(.*)", re.DOTALL)


class ImageFiles:
    """The directory of one session store's images."""

    def __init__(self, directory: Path):
        self.directory = directory

    def path(self, name: str) -> Path:
        return self.directory / name

    def put(self, mime: str, data: bytes) -> str:
        """Store ``data`` (once per content) and return its file name."""
        name = f"{hashlib.sha256(data).hexdigest()}.{EXTENSIONS[mime]}"
        target = self.path(name)
        if target.is_file():
            os.utime(target)  # in use again: a sweep leaves it alone (``GRACE``)
            return name
        private_dir(self.directory)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, target)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            full = disk_full(exc, target)
            if full is not None:
                raise full from exc
            raise
        return name

    def sweep(self, referenced: set[str]) -> int:
        """Delete the stored images no message names any more (a session deleted or
        pruned, a turn undone), except those written or reused within ``GRACE`` seconds
        (a message naming them may be on its way); how many were deleted."""
        try:
            names = [entry for entry in os.scandir(self.directory)
                     if NAME.fullmatch(entry.name) and entry.name not in referenced]
        except FileNotFoundError:
            return 0
        cutoff = time.time() - GRACE
        stale = [entry for entry in names if entry.stat().st_mtime < cutoff]
        for entry in stale:
            Path(entry.path).unlink(missing_ok=True)
        return len(stale)

    def keep(self, content: Any) -> tuple[Any, list[str]]:
        """A message's content as its row keeps it: the text (text parts joined, other
        parts named) and the names of the images it stored. A string is kept as is."""
        if not isinstance(content, list):
            return content, []
        texts, names = [], []
        for part in content:
            if not isinstance(part, dict):
                continue
            name = self._stored(part) if part.get("type") == "image_url" else None
            if name is not None:
                names.append(name)
            elif part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            else:
                texts.append(f"[{part.get('type', 'part')} not kept]")
        return "\n".join(texts), names

    def _stored(self, part: dict[str, Any]) -> str | None:
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        found = DATA_URL.fullmatch(url) if isinstance(url, str) else None
        if found is None or found.group(1) not in EXTENSIONS:
            return None
        try:
            data = base64.b64decode(found.group(2), validate=True)
        except (binascii.Error, ValueError):
            return None
        return self.put(found.group(1), data)

    def content(self, text: str | None, names: list[str]) -> Any:
        """A stored message's content for the model: ``text`` and its images read back
        (a missing file becomes a note saying so)."""
        if not names:
            return text
        parts: list[dict[str, Any]] = [{"type": "text", "text": text or ""}]
        for name in names:
            part = self.part(name)
            parts.append(part if part is not None else
                         {"type": "text", "text": f"[image {name} is no longer stored]"})
        return parts

    def part(self, name: str) -> dict[str, Any] | None:
        """One stored image as an ``image_url`` part; None when it is gone."""
        if NAME.fullmatch(name) is None:
            return None
        try:
            data = self.path(name).read_bytes()
        except OSError:
            return None
        mime = TYPES[name.rsplit(".", 1)[1]]
        encoded = base64.b64encode(data).decode("ascii")
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
