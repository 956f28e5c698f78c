"""Isolation of one run: a scratch copy of the profile's home and its own working directory.

The copy holds what shapes the agent (config, secrets, SOUL.md, memories, skills,
plugins, approvals); the run's session goes to the experiment's own ``state.db``.
Nothing is written back to the profile, unless ``--keep`` asks for the memories and
skills that runs changed (``keep_changes``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from hermes.home import Home

COPIED = ("config.yaml", ".env", "SOUL.md", "profile.json", "approvals.json", "conf",
          "memories", "skills", "plugins")
KEPT = ("memories", "skills")
"""What ``--keep`` writes back to the profile."""


class ScratchHome(Home):
    """A run's private home whose sessions live in the experiment's database."""

    __slots__ = ("transcripts",)

    transcripts: Path

    def __init__(self, path: Path, root: Path, name: str,
                 transcripts: Path = Path("state.db")) -> None:
        super().__init__(path, root, name)
        object.__setattr__(self, "transcripts", transcripts)

    @property
    def sessions_db(self) -> Path:
        return self.transcripts


def scratch_copy(source: Home, target: Path, transcripts: Path) -> ScratchHome:
    """Copy ``source``'s files that shape the agent into ``target`` (a new directory)."""
    target.mkdir(parents=True, mode=0o700)
    for name in COPIED:
        path = source.path / name
        if path.is_dir():
            shutil.copytree(path, target / name, symlinks=True)
        elif path.is_file():
            shutil.copy2(path, target / name)
    # The real root stays the root: tools then refuse the real profiles' files as foreign.
    home = ScratchHome(path=target, root=source.root, name=source.name, transcripts=transcripts)
    return home.ensure()  # type: ignore[return-value]


def fingerprint(home: Home) -> dict[str, str]:
    """Hashes of the files ``--keep`` may write back, by path relative to the home."""
    found: dict[str, str] = {}
    for name in KEPT:
        base = home.path / name
        for path in sorted(base.rglob("*")) if base.is_dir() else ():
            if path.is_file() and not path.is_symlink():
                found[str(path.relative_to(home.path))] = hashlib.sha256(
                    path.read_bytes()).hexdigest()
    return found


def keep_changes(scratch: Home, baseline: dict[str, str], profile: Home) -> list[str]:
    """Write the files a run added or changed (since ``baseline``) into ``profile``;
    the relative paths written. Files the run deleted stay in the profile."""
    written = []
    for relative, digest in fingerprint(scratch).items():
        if baseline.get(relative) != digest:
            _copy_bytes(scratch.path / relative, profile.path / relative)
            written.append(relative)
    return written


def _copy_bytes(source: Path, target: Path) -> None:
    """Byte for byte (skills may hold any file), 0600, replaced atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, partial)
    os.chmod(partial, 0o600)
    os.replace(partial, target)
