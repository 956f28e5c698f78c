"""Pairing: how someone not on a platform's allowlist gets access, with the owner's consent.

An unknown sender in a direct message gets a code (8 characters from an alphabet
without 0/O/1/I/L, valid one hour) and hands it to the owner, who runs
``hermes pairing approve PLATFORM CODE``. Codes are stored only as salted scrypt
hashes. A sender gets at most one code per ``REQUEST_INTERVAL`` and a platform has at
most ``MAX_PENDING`` codes waiting. Only the owner approves (strangers have no way to
submit a code), so the owner's typos are refused and counted nowhere. A lock a file
carries (``locked_until``, written by earlier versions after five wrong codes) gives
strangers no new codes until it ends or ``hermes pairing unlock`` lifts it.

One file per platform, ``<home>/pairing/<platform>.json`` (0600, written atomically
under a file lock: the gateway and the CLI share it).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hermes.codes import code_matches, is_code, new_code, normalise_code, read_json_object
from hermes.errors import UserError, did_you_mean
from hermes.fsutil import atomic_write, private_dir

CODE_TTL = 3600.0
"""Seconds a code stays valid."""
KEEP_EXPIRED = 86400.0
"""Seconds an expired code is remembered, so that approving it says "expired"."""
REQUEST_INTERVAL = 600.0
"""Seconds before the same sender can be given another code."""
MAX_PENDING = 3
LOCKOUT = 3600.0
"""Seconds a lock lasted (earlier versions locked after five wrong codes)."""
PLATFORM_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
Refusal = Literal["rate_limited", "locked", "busy"]
Clock = Callable[[], float]


class PairingError(UserError):
    """A pairing command that cannot be done (wrong or expired code, unknown user or
    platform)."""


@dataclass(frozen=True)
class Issued:
    """The answer to a request for a code: the code, or why none was given."""

    code: str | None
    refusal: Refusal | None = None


@dataclass(frozen=True)
class PendingCode:
    """A code waiting for the owner (only a fingerprint of its hash is ever shown)."""

    platform: str
    user_id: str
    user_name: str
    created_at: float
    fingerprint: str
    expired: bool


@dataclass(frozen=True)
class PairedUser:
    """Someone the owner let in."""

    platform: str
    user_id: str
    user_name: str
    approved_at: float


class PairingStore:
    """The pairing files of one home."""

    def __init__(self, directory: Path, clock: Clock = time.time):
        self.directory = directory
        self.clock = clock
        self._cache: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}

    def request(self, platform: str, user_id: str, user_name: str = "") -> Issued:
        """A new code for ``user_id``, or the reason there is none."""
        with self._editing(platform) as data:
            now = self.clock()
            if data["locked_until"] > now:
                return Issued(None, "locked")
            if now - data["requests"].get(user_id, -REQUEST_INTERVAL) < REQUEST_INTERVAL:
                return Issued(None, "rate_limited")
            waiting = [e for e in data["pending"].values() if now - e["created_at"] < CODE_TTL]
            if len(waiting) >= MAX_PENDING:
                return Issued(None, "busy")
            code, stored = new_code()
            data["pending"][secrets.token_hex(8)] = {
                **stored, "user_id": user_id,
                "user_name": user_name, "created_at": now}
            data["requests"][user_id] = now
            return Issued(code)

    def approve(self, platform: str, code: str) -> PairedUser:
        """Let in the sender of ``code`` (the owner's wrong code changes nothing)."""
        given = normalise_code(code)
        with self._editing(platform) as data:
            now = self.clock()
            found = _matching(data["pending"], given)
            if found is None:
                raise PairingError(f"no {platform} pairing request has that code (`hermes "
                                   "pairing list` shows who is waiting; codes are 8 "
                                   "characters)")
            entry_id, entry = found
            if now - entry["created_at"] >= CODE_TTL:
                raise PairingError(f"that {platform} code expired (codes are valid for "
                                   f"{CODE_TTL / 3600:g} hour); ask them to send a message "
                                   "again for a new one")
            data["pending"] = {k: e for k, e in data["pending"].items()
                               if k != entry_id and e["user_id"] != entry["user_id"]}
            data["paired"][entry["user_id"]] = {"user_name": entry["user_name"],
                                                "approved_at": now}
            return PairedUser(platform, entry["user_id"], entry["user_name"], now)

    def revoke(self, platform: str, user_id: str) -> PairedUser:
        """Take back a pairing (the allowlist in config is not touched)."""
        with self._editing(platform) as data:
            entry = data["paired"].pop(user_id, None)
            if entry is None:
                known = ", ".join(sorted(data["paired"])) or "none"
                raise PairingError(f"{user_id} is not paired on {platform} (paired: {known})")
            return PairedUser(platform, user_id, entry["user_name"], entry["approved_at"])

    def is_paired(self, platform: str, user_id: str) -> bool:
        return bool(user_id) and user_id in self._read(platform)["paired"]

    def paired(self) -> list[PairedUser]:
        return [PairedUser(platform, user, e["user_name"], e["approved_at"])
                for platform in self.platforms()
                for user, e in self._read(platform)["paired"].items()]

    def pending(self) -> list[PendingCode]:
        now = self.clock()
        return [PendingCode(platform, e["user_id"], e["user_name"], e["created_at"],
                            e["hash"][:8], now - e["created_at"] >= CODE_TTL)
                for platform in self.platforms()
                for e in self._read(platform)["pending"].values()]

    def unlock(self, platform: str) -> bool:
        """Lift the platform's lock; False when it was not locked."""
        if self.locked_until(platform) <= self.clock():
            return False
        with self._editing(platform) as data:
            data["failures"], data["locked_until"] = 0, 0.0
        return True

    def locked_until(self, platform: str) -> float:
        """When the platform's lockout ends (in the past when there is none)."""
        return float(self._read(platform)["locked_until"])

    def platforms(self) -> list[str]:
        """Platforms with a pairing file."""
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.json")
                      if PLATFORM_NAME.match(p.stem))

    def _path(self, platform: str) -> Path:
        if not PLATFORM_NAME.match(platform):
            raise PairingError(f"{platform!r} is not a platform name (letters, digits, _ "
                               "and -, as under platforms.enabled)")
        return self.directory / f"{platform}.json"

    def _read(self, platform: str) -> dict[str, Any]:
        path = self._path(platform)
        try:
            stat = path.stat()
        except FileNotFoundError:
            return _blank()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(platform)
        if cached is None or cached[0] != stamp:
            cached = (stamp, _parse(path))
            self._cache[platform] = cached
        return cached[1]

    @contextmanager
    def _editing(self, platform: str) -> Iterator[dict[str, Any]]:
        """The platform's data, written back (0600, atomically) when the block ends
        without an exception other than ``PairingError`` (a failure count must stick)."""
        from filelock import FileLock

        path = self._path(platform)
        private_dir(self.directory)
        with FileLock(str(path.with_suffix(".lock")), timeout=30, mode=0o600):
            data = _parse(path) if path.exists() else _blank()
            try:
                yield data
            except PairingError:
                self._write(path, data)
                raise
            self._write(path, data)

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        now = self.clock()
        data["pending"] = {k: e for k, e in data["pending"].items()
                           if now - e["created_at"] < KEEP_EXPIRED}
        data["requests"] = {u: t for u, t in data["requests"].items()
                            if now - t < REQUEST_INTERVAL}
        atomic_write(path, json.dumps(data, indent=2) + "\n", mode=0o600)


def known_platform(store: PairingStore, enabled: Iterable[str], platform: str) -> str:
    """``platform`` when the profile enables it (``enabled``) or ``store`` has codes for
    it; a typo is refused before any pairing file is touched (``hermes pairing``, the
    dashboard's Gateway page)."""
    known = sorted(set(enabled) | set(store.platforms()))
    if platform not in known:
        raise UserError(f"no platform {platform!r} is enabled or has pairing codes"
                        f"{did_you_mean(platform, known)} (known: {', '.join(known) or 'none'})")
    return platform


def _matching(pending: dict[str, Any], code: str) -> tuple[str, dict[str, Any]] | None:
    if not is_code(code):
        return None
    for entry_id, entry in pending.items():
        if code_matches(code, entry):
            return entry_id, entry
    return None


def _blank() -> dict[str, Any]:
    return {"pending": {}, "paired": {}, "requests": {}, "failures": 0, "locked_until": 0.0}


def _parse(path: Path) -> dict[str, Any]:
    """The file's data; an unreadable or malformed file is an error, never "nobody"."""
    return _blank() | read_json_object(path, "pairing", PairingError)
