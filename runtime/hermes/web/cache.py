"""Pages kept in the profile's home: a cache of extractions (``web.cache_ttl``) and, per
session, the originals of pages that were condensed (``web_extract(..., full=true)``).

Files under ``<home>/cache/web/`` are JSON, 0600, in 0700 directories, named by a hash
of what they hold (URL and format), so a URL never appears in a file name. A cache is a
convenience: a file that cannot be read or written is skipped, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes.fsutil import private_dir
from hermes.sessions.files import session_files_dir

WEB_CACHE_DIR = ("cache", "web")


def web_cache_dir(home_path: Path) -> Path:
    """``<home>/cache/web``: where the web tools keep what they fetched."""
    return home_path.joinpath(*WEB_CACHE_DIR)


def entry_key(*parts: str) -> str:
    """The file name of an entry: a hash of ``parts`` (a URL and a format, say)."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]


class JsonStore:
    """JSON entries in one directory; with ``ttl`` (seconds) older entries are misses."""

    def __init__(self, directory: Path, ttl: float | None = None):
        self.directory = directory
        self.ttl = ttl

    @property
    def enabled(self) -> bool:
        return self.ttl is None or self.ttl > 0

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry ``key``, or None when missing, expired or unreadable."""
        if not self.enabled:
            return None
        path = self.directory / f"{key}.json"
        try:
            if self.ttl is not None and time.time() - path.stat().st_mtime > self.ttl:
                return None
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        """Store ``data`` as ``key`` (0600, replaced atomically); failures are ignored."""
        if not self.enabled:
            return
        try:
            private_dir(self.directory)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:  # mkstemp makes it 0600
                json.dump(data, handle, ensure_ascii=False)
            os.replace(tmp, self.directory / f"{key}.json")
        except OSError:
            Path(tmp).unlink(missing_ok=True)


def page_cache(home_path: Path, ttl: float) -> JsonStore:
    """The profile's cache of extracted pages (``web.cache_ttl`` seconds; 0: off)."""
    return JsonStore(web_cache_dir(home_path) / "pages", ttl)


def session_originals(home_path: Path, session_id: str) -> JsonStore:
    """The originals of pages condensed in session ``session_id`` (kept, no expiry, until
    the session is deleted: they are among its files)."""
    return JsonStore(session_files_dir(home_path, session_id) / "web-originals")
