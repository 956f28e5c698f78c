"""A cache of composed (unresolved) configs, so a warm start skips Hydra.

Composition is a pure function of its inputs: the layers' values and group
choices, the chosen group option files, and the overrides — exactly what
``Sources`` records. The cache key is a hash of those, so any edit to any file
that takes part, or any different override, misses. Only configs that
validated are stored. Entries hold no resolved secrets (interpolations stay
unresolved), and a composition an override gives a literal secret
(``provider.api_key=sk-...``) is not stored at all (``compose._literal_secrets``):
the secret stays where the user put it. Entries live in the home
(``.cache/config/``, 0600), are never exported or cloned, and the newest ``KEEP``
are kept.

An entry is a MAC line, then the JSON. The MAC (``cache_signing``: a per-root key
kept outside every home) covers the home, the cache key and the JSON, so an entry
edited, written without a MAC, or moved to another key or profile is never used:
the config is composed again and the entry rewritten.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes import __version__
from hermes.config.cache_signing import mac, signing_key
from hermes.config.sources import Sources
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

KEEP = 16
FORMAT = 2


def cache_key(sources: Sources) -> str:
    payload = {
        "format": FORMAT,
        "version": __version__,
        "sources": [[s.where, s.data, list(s.deletes)] for s in sources.items],
        "choices": {g: c.option for g, c in sorted(sources.choices.items())},
    }
    # Insertion order is deterministic for the same files, so no sort_keys (YAML
    # allows non-string keys, which JSON would refuse to sort).
    blob = json.dumps(payload, default=repr).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:32]


class ComposeCache:
    """Composed configs of one home, by ``cache_key``, each authenticated."""

    def __init__(self, home: Home, environ: Mapping[str, str]):
        self.home = home
        self.environ = environ
        self.directory = home.path / ".cache" / "config"

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry for ``key``; None when there is none or its MAC does not hold."""
        try:
            blob = (self.directory / f"{key}.json").read_bytes()
        except OSError:
            return None
        tag, newline, payload = blob.partition(b"\n")
        secret = signing_key(self.home.root, self.environ, create=False) if newline else None
        if secret is None or not hmac.compare_digest(tag, self._mac(secret, key, payload)):
            return None
        try:
            data = json.loads(payload)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, raw: dict[str, Any]) -> None:
        """Store ``raw``; silently does nothing where the home does not exist yet or
        there is no key to sign it with."""
        if not self.home.path.is_dir():
            return  # never create a home just to cache into it
        text = json.dumps(raw, default=repr)
        if json.loads(text) != raw:
            return  # not representable in JSON (e.g. non-string keys): compose each time
        secret = signing_key(self.home.root, self.environ, create=True)
        if secret is None:
            return
        payload = text.encode("utf-8")
        try:
            private_dir(self.directory)
            atomic_write(self.directory / f"{key}.json",
                         (self._mac(secret, key, payload) + b"\n" + payload).decode("utf-8"),
                         mode=0o600)
            self._prune()
        except OSError:
            return  # a read-only home still composes, just without the cache

    def _mac(self, secret: bytes, key: str, payload: bytes) -> bytes:
        return mac(secret, str(self.home.path).encode("utf-8", "surrogateescape"),
                   key.encode("ascii", "replace"), payload)

    def _prune(self) -> None:
        entries = sorted(self.directory.glob("*.json"), key=_mtime, reverse=True)
        for stale in entries[KEEP:]:
            stale.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
