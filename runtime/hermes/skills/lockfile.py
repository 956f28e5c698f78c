"""``skills/.lock.json``: where installed skills came from.

One entry per installed skill: the source as given (a path, or a git URL with an
optional ``#subdir``), the skill's directory inside it, the commit it was taken
from (git sources), the content hash of what was installed, where it lives in the
home, and when it was installed and last updated. ``hermes skills update``
re-fetches the source and compares hashes; ``audit`` scans what the lock lists.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write

LOCK_FILE = ".lock.json"
FORMAT = 1


@dataclass
class LockEntry:
    """How one installed skill was installed."""

    source: str
    """As given to ``hermes skills install``: a path or a git URL (``#subdir`` included)."""
    subdir: str
    """The skill's directory inside the fetched source (``.`` for the source itself)."""
    hash: str
    """``sha256:...`` of the installed files (``content_hash``)."""
    path: str
    """Where the skill lives under ``skills/`` (``<category>/<name>``)."""
    installed: float
    updated: float
    commit: str | None = None
    """The git commit the files came from; None for a local path."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LockEntry:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def read_lock(skills_dir: Path) -> dict[str, LockEntry]:
    """The lock's entries by skill name (an unreadable lock reads as empty)."""
    try:
        data = json.loads((skills_dir / LOCK_FILE).read_text(encoding="utf-8"))
        entries = data["skills"]
        return {name: LockEntry.from_dict(entry) for name, entry in entries.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def write_lock(skills_dir: Path, entries: dict[str, LockEntry]) -> None:
    data = {"format": FORMAT,
            "skills": {name: asdict(entry) for name, entry in sorted(entries.items())}}
    atomic_write(skills_dir / LOCK_FILE, json.dumps(data, indent=2) + "\n", mode=0o600)


def content_hash(directory: Path) -> str:
    """``sha256:`` of every file's relative path and bytes, in path order; files and
    directories starting with ``.`` (``.git``, ``.origin``) are left out."""
    digest = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file() \
                or path.is_symlink():
            continue
        digest.update(rel.as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"sha256:{digest.hexdigest()}"
