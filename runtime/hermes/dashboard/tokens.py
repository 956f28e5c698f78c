"""The dashboard's secrets on disk, each 0600 and made at first use: the root token
(every profile) in ``<root>/dashboard/token``, and one token per profile (that profile
only) in its home, ``<home>/dashboard/profile-token``, so it goes with the profile when it
is renamed or deleted. Profile exports and clones leave ``dashboard/`` out.

Each token has a host label: the browser opens a dashboard on loopback at
``http://<label>.localhost:PORT/`` (browsers resolve every ``*.localhost`` name to
loopback themselves, RFC 6761), and its session cookie is set for that name only.
Cookies do not isolate ports (RFC 6265 8.5): a cookie set for ``127.0.0.1`` would go to
every server on ``127.0.0.1``, one the agent started included; one set for a name nobody
else knows goes nowhere else. The label is derived from the token (a keyed hash), so it
is as secret as the token file, stable across restarts (bookmarks keep working) and
never reveals the token. A browser that does not resolve ``*.localhost`` (older Safari)
needs ``dashboard.cookie_host: loopback``: the cookie is then set for ``127.0.0.1``,
named with the port and ``cookie_tag`` (another keyed hash), at the risk stated there."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hermes.fsutil import private_dir
from hermes.home import home_for, validate_profile_name

TOKEN_BYTES = 32
LABEL_BYTES = 15
"""A host label of 24 base32 characters (120 bits)."""


@dataclass(frozen=True)
class Access:
    """What one token (and the browser session it opened) may see."""

    profile: str | None
    """The one profile it may see; None: the root token, which sees every profile."""

    def sees(self, profile: str) -> bool:
        return self.profile is None or self.profile == profile


class Tokens:
    """The tokens of one root; ``access`` says what a presented token opens."""

    def __init__(self, root: Path):
        self.root = root
        self.directory = root / "dashboard"

    def root_token(self) -> str:
        """The token of every profile: ``<root>/dashboard/token``."""
        return _read_or_create(self.directory / "token")

    def profile_token(self, profile: str) -> str:
        """The token of one profile: ``<home>/dashboard/profile-token``."""
        return _read_or_create(self.profile_token_file(profile))

    def profile_token_file(self, profile: str) -> Path:
        validate_profile_name(profile, allow_default=True)
        return home_for(self.root, profile).path / "dashboard" / "profile-token"

    def access(self, presented: str, profiles: list[str]) -> Access | None:
        """The access ``presented`` gives among ``profiles``; None for no token of ours."""
        if _same(presented, self.root_token()):
            return Access(None)
        for profile in profiles:
            path = self.profile_token_file(profile)
            if path.is_file() and _same(presented, path.read_text().strip()):
                return Access(profile)
        return None


    def labels(self, profiles: list[str]) -> set[str]:
        """The host labels of the root token and of ``profiles``' tokens that exist."""
        found = {label_of(self.root_token())}
        for profile in profiles:
            path = self.profile_token_file(profile)
            if path.is_file():
                found.add(label_of(path.read_text().strip()))
        return found


def label_of(token: str) -> str:
    """The host label of ``token``: ``<label>.localhost`` is its browser's host name."""
    return _keyed(token, b"hermes dashboard host label", LABEL_BYTES)


def cookie_tag(token: str) -> str:
    """8 characters naming ``token``'s dashboard in a cookie set for ``127.0.0.1``
    (``dashboard.cookie_host: loopback``), where every server on the machine reads it:
    another keyed hash, so the name reveals neither the token nor its label."""
    return _keyed(token, b"hermes dashboard cookie name", 5)


def _keyed(token: str, purpose: bytes, size: int) -> str:
    digest = hmac.new(token.encode(), purpose, hashlib.sha256)
    return base64.b32encode(digest.digest()[:size]).decode().lower()


def _same(presented: str, token: str) -> bool:
    return hmac.compare_digest(presented.encode(), token.encode())


def _read_or_create(path: Path) -> str:
    """The token in ``path``; a new random one, written 0600, if there is none. The new
    file is linked into place whole, so two processes starting at once read one token."""
    if path.is_file():
        return path.read_text().strip()
    private_dir(path.parent)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".token.")  # 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(token + "\n")
        os.link(temporary, path)
    except FileExistsError:
        return path.read_text().strip()
    finally:
        os.unlink(temporary)
    return token
