"""Where file tools may write (and read): credential files and other profiles are off limits.

Every check runs on the fully resolved path (symlinks followed, ``..``
collapsed), so ``notes -> ~/.ssh/authorized_keys`` or
``profiles/me/../other/.env`` are judged by where they really land.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from hermes.errors import ToolError
from hermes.home import ACTIVE_FILE, PROFILES_DIR, Home

# Under the OS user's home: files that hold credentials for other systems.
CREDENTIAL_PATHS = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".docker/config.json", ".kube/config", ".config/gcloud",
    ".azure", ".git-credentials", ".pgpass", ".pypirc", ".npmrc", ".config/gh/hosts.yml",
)
# In this home: the runtime's own config and secrets, and the approvals allowlist
# (writing it would let the agent approve its own commands).
RUNTIME_FILES = (".env", "config.yaml", "conf", "approvals.json")


class PathRefused(ToolError):
    """A path a file tool must not touch."""


def resolve_path(path: str, cwd: Path, user_home: Path | None = None) -> Path:
    """``path`` made absolute against ``cwd``, symlinks and ``..`` resolved, and ``~``
    expanded to ``user_home`` (the context's, not this process's ``$HOME``)."""
    if not path.strip():
        raise ToolError("path is empty; give a file path")
    if user_home is not None and (path == "~" or path.startswith("~/")):
        expanded = user_home / path[2:]
    else:
        expanded = Path(os.path.expanduser(path))
    absolute = expanded if expanded.is_absolute() else cwd / expanded
    return Path(os.path.realpath(absolute))


def _within(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def check_readable(path: Path, home: Home) -> None:
    """Refuse to read inside another profile's home (profiles never see each other's data)."""
    owner = _foreign_owner(path, home)
    if owner is not None:
        raise PathRefused(f"{path} belongs to {owner}; a profile cannot read another's files")


def check_writable(path: Path, home: Home, user_home: Path) -> None:
    """Raise ``PathRefused`` unless a write tool may change the resolved ``path``."""
    for name in CREDENTIAL_PATHS:
        protected = _real(user_home / name)
        if _within(path, protected):
            raise PathRefused(f"{path} is a credential file (~/{name}); "
                              "write tools never change credentials")
    if path == _real(home.root) / ACTIVE_FILE:
        raise PathRefused(f"{path} selects the active profile; use `hermes profile switch`")
    owner = _foreign_owner(path, home)
    if owner is not None:
        raise PathRefused(f"{path} belongs to {owner}; a profile cannot change another's files")
    this_home = _real(home.path)
    if _within(path, _real(home.skills_dir)):
        raise PathRefused(f"{path} is in this profile's skills directory; create or change "
                          "skills with the skill_manage tool (it scans them and records "
                          "where they came from), not with a file tool")
    for name in RUNTIME_FILES:
        if _within(path, this_home / name):
            raise PathRefused(f"{path} is this profile's runtime configuration ({name}); "
                              "change it with `hermes config set`, not with a tool")


def _foreign_owner(path: Path, home: Home) -> str | None:
    """Which other profile (or the root) owns ``path``; None if nobody else does."""
    root, this_home = _real(home.root), _real(home.path)
    if not _within(path, root):
        return None
    profiles = root / PROFILES_DIR
    if _within(path, profiles):
        relative = path.relative_to(profiles).parts
        if relative and (root / PROFILES_DIR / relative[0]) == this_home:
            return None
        return f'profile "{relative[0]}"' if relative else "the profiles directory"
    if this_home != root:
        return 'the default profile (the Hermes root)'
    return None


def check_sandbox_writable(path: str, sandbox_home: str) -> None:
    """In a sandbox or on a remote host only its user's credential files are off limits
    (no profile home is there). ``path`` is normalised but not symlink-resolved."""
    for name in CREDENTIAL_PATHS:
        protected = posixpath.join(sandbox_home, name)
        if path == protected or path.startswith(protected + "/"):
            raise PathRefused(f"{path} is a credential file (~/{name}); "
                              "write tools never change credentials")
