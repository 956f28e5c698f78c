"""``skills/.lock.json``: where installed skills came from.

One entry per installed skill: the source as given (a path, or a git URL with an
optional ``#subdir``), the skill's directory inside it, the commit it was taken
from (git sources), the content hash of what was installed, where it lives in the
home, and when it was installed and last updated. ``hermes skills update``
re-fetches the source and compares hashes; ``audit`` scans what the lock lists. The
scan's findings the user saw and accepted at install or update (``--force``, or a yes
at the prompt) are recorded with the entry and the hash of each one's file, so listings
and ``skill_view`` do not withhold the skill for them again while that file is unchanged
(``accepted_findings``).
A lock that cannot be read (not JSON, or not this shape) is refused with one line
naming it, and nothing writes over it: it is the only record of every other skill's
provenance.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write
from hermes.skills.links import tree
from hermes.skills.model import SkillError

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
    accepted: dict[str, str] = field(default_factory=dict)
    """The scan's findings (``file: kind: detail``) the user accepted when installing or
    updating, each with the ``sha256:`` of its file then: not raised again while that file
    is unchanged. A new finding, or any in a changed file, still is."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LockEntry:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def read_lock(skills_dir: Path) -> dict[str, LockEntry]:
    """The lock's entries by skill name (none when there is no lock); ``SkillError``
    naming the file when it cannot be read, so nothing overwrites it."""
    file = skills_dir / LOCK_FILE
    records = read_lock_records(file, "skills")
    try:
        return {name: LockEntry.from_dict(entry) for name, entry in records.items()}
    except TypeError as exc:
        raise _unreadable(file, f"an entry lacks a field: {exc}") from None


def read_lock_records(file: Path, key: str) -> dict[str, dict[str, Any]]:
    """``{name: record}`` under ``key`` of lock file ``file`` (also ``plugins/.lock.json``);
    {} when the file does not exist; ``SkillError`` when it is not JSON of that shape."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise _unreadable(file, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) \
            from None
    records = data.get(key) if isinstance(data, dict) else None
    if not isinstance(records, dict) or not all(isinstance(v, dict) for v in records.values()):
        raise _unreadable(file, f"expected {{\"{key}\": {{NAME: {{...}}}}}}")
    return {str(name): record for name, record in records.items()}


def lock_or_none(skills_dir: Path, warn: Callable[[str], None]) -> dict[str, LockEntry]:
    """The lock's entries for a listing: an unreadable lock is warned about and read as
    empty (listings write nothing)."""
    try:
        return read_lock(skills_dir)
    except SkillError as exc:
        warn(str(exc))
        return {}


def accepted_record(directory: Path, findings: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{finding: sha256 of its file}`` for ``(file, finding)`` pairs of the skill in
    ``directory``, as the user accepts them."""
    return {line: _file_hash(directory, file) for file, line in findings}


def accepted_findings(skills_dir: Path, name: str, directory: Path) -> frozenset[str]:
    """The findings the user accepted for installed skill ``name`` (in ``directory``) whose
    files are unchanged since; none when it is not installed or the lock cannot be read."""
    try:
        entry = read_lock(skills_dir).get(name)
    except SkillError:
        return frozenset()
    accepted = entry.accepted if entry is not None else None
    if not isinstance(accepted, dict):
        return frozenset()
    return frozenset(line for line, digest in accepted.items()
                     if digest == _file_hash(directory, line.split(": ", 1)[0]))


def _file_hash(directory: Path, file: str) -> str:
    """``sha256:`` of a skill's file ("" for the skill as a whole, or a file that is gone)."""
    try:
        return "sha256:" + hashlib.sha256((directory / file).read_bytes()).hexdigest() \
            if file != "." else ""
    except OSError:
        return "gone"


def _unreadable(file: Path, why: str) -> SkillError:
    return SkillError(f"{file}: not a valid lock file ({why}); nothing was changed — repair "
                      "it or move it aside (it records where installed things came from)")


def write_lock(skills_dir: Path, entries: dict[str, LockEntry]) -> None:
    data = {"format": FORMAT,
            "skills": {name: _record(entry) for name, entry in sorted(entries.items())}}
    atomic_write(skills_dir / LOCK_FILE, json.dumps(data, indent=2) + "\n", mode=0o600)


def _record(entry: LockEntry) -> dict[str, Any]:
    """The entry as written: ``accepted`` only when there is something in it."""
    return {k: v for k, v in asdict(entry).items() if k != "accepted" or v}


def content_hash(directory: Path) -> str:
    """``sha256:`` of every file's relative path and bytes (a link inside the skill: where
    it leads), in path order; files and directories starting with ``.`` (``.git``,
    ``.origin``) and links leading out of the skill (never copied) are left out."""
    digest = hashlib.sha256()
    for entry in tree(directory):
        if entry.hidden or entry.kind == "outside":
            continue
        digest.update(entry.rel.encode() + b"\0")
        if entry.kind == "link":
            digest.update(b"link\0" + entry.target.encode())
        else:
            digest.update(hashlib.sha256(entry.path.read_bytes()).digest())
    return f"sha256:{digest.hexdigest()}"
