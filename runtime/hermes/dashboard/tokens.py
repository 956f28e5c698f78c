"""The dashboard's secrets on disk, each 0600 and made at first use: the root token
(every profile) in ``<root>/dashboard/token``, and one token per profile (that profile
only) in its home, ``<home>/dashboard/profile-token``, so it goes with the profile when it
is renamed or deleted. Profile exports and clones leave ``dashboard/`` out."""

from __future__ import annotations

import hmac
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hermes.fsutil import private_dir
from hermes.home import home_for, validate_profile_name

TOKEN_BYTES = 32


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
