"""Finding skills in their sources, with a cache of parsed frontmatter.

A source's root holds ``<name>/SKILL.md`` or ``<category>/<name>/SKILL.md``;
directories starting with ``.`` (the archive, the lock file's neighbours) are not
searched. The first source defining a name wins (the home, then
``skills.directories`` in order, then the bundled skills); the others are reported
as shadowed. A malformed ``SKILL.md``, one whose name differs from its directory,
one failing the threat scan (text edited in by hand) or one that is a link leading out
of its skill (``links.py``) is skipped and reported once as a ``Problem``.

Parsing hundreds of frontmatters with YAML costs more than the rest of a listing,
so results are cached in the home (``.cache/skills.json``) by each file's
modification time and size: a warm listing only stats the files.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.fsutil import atomic_write
from hermes.skills.format import SkillFormatError, SkillMeta, parse_skill_text
from hermes.skills.links import within
from hermes.skills.model import SKILL_FILE, Skill, SkillSource

CACHE_FORMAT = 4
_SKILL_SUFFIX = os.sep + SKILL_FILE
"""Appended to directory paths (strings, not ``Path``: hundreds per listing)."""


@dataclass(frozen=True)
class Problem:
    """Why one ``SKILL.md`` was skipped."""

    file: Path
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}; skipped"


@dataclass
class Discovery:
    """Everything found in the sources, in source order."""

    skills: list[Skill] = field(default_factory=list)
    """The skills in effect: one per name, the first source's."""
    shadowed: list[tuple[Skill, Skill]] = field(default_factory=list)
    """``(hidden, winner)`` for every name defined again in a later source."""
    problems: list[Problem] = field(default_factory=list)
    other_platform: list[Skill] = field(default_factory=list)
    """Skills whose ``platforms`` leave out this machine (not loaded)."""


class ParseCache:
    """Parsed frontmatter by file, valid while the file's mtime and size match: on disk
    (``entries``, shared by processes) and in memory (``loaded``: the ``Skill`` or
    ``Problem`` built from it, so a long-lived runtime's listings only stat files)."""

    def __init__(self, file: Path | None):
        self.file = file
        self.entries: dict[str, Any] = self._load()
        self.loaded: dict[str, tuple[list[int], Skill | Problem]] = {}
        self.dirty = False

    def _load(self) -> dict[str, Any]:
        if self.file is None:
            return {}
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        ok = isinstance(data, dict) and data.get("format") == CACHE_FORMAT
        return data.get("entries", {}) if ok else {}

    def get(self, path: str, stamp: list[int]) -> dict[str, Any] | None:
        entry = self.entries.get(path)
        return entry if entry is not None and entry.get("stamp") == stamp else None

    def put(self, path: str, entry: dict[str, Any]) -> None:
        self.entries[path] = entry
        self.dirty = True

    def save(self, seen: set[str]) -> None:
        """Write back (dropping files no longer seen) where the home exists."""
        gone = set(self.entries) - seen
        for path in set(self.loaded) - seen:
            del self.loaded[path]
        if not (self.dirty or gone) or self.file is None or not self.file.parent.parent.is_dir():
            return
        for path in gone:
            del self.entries[path]
        self.dirty = False
        # A read-only home still lists its skills, only slower.
        with contextlib.suppress(OSError):
            atomic_write(self.file, json.dumps({"format": CACHE_FORMAT, "entries": self.entries}),
                         mode=0o600)


def discover(sources: Sequence[SkillSource], cache: ParseCache, platform: str) -> Discovery:
    """Every skill of ``sources`` (see the module docstring for the rules)."""
    found = Discovery()
    winners: dict[str, Skill] = {}
    seen: set[str] = set()
    for source in sources:
        for category, directory, stat in skill_dirs(source.root):
            loaded = _load(source, category, directory, stat, cache)
            seen.add(directory + _SKILL_SUFFIX)
            if isinstance(loaded, Problem):
                found.problems.append(loaded)
            elif loaded.meta is not None and not loaded.meta.applies_to(platform):
                found.other_platform.append(loaded)
            elif loaded.name in winners:
                found.shadowed.append((loaded, winners[loaded.name]))
            else:
                winners[loaded.name] = loaded
                found.skills.append(loaded)
    cache.save(seen)
    return found


def skill_dirs(root: Path) -> Iterator[tuple[str | None, str, os.stat_result]]:
    """``(category, directory, stat of its SKILL.md)`` of every directory under ``root``
    holding a ``SKILL.md`` (one ``stat`` per directory looked at)."""
    for entry in _subdirs(root):
        stat = _stat(entry.path + _SKILL_SUFFIX)
        if stat is not None:
            yield None, entry.path, stat
            continue
        for inner in _subdirs(entry.path):
            stat = _stat(inner.path + _SKILL_SUFFIX)
            if stat is not None:
                yield entry.name, inner.path, stat


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _subdirs(root: Path | str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as entries:
            found = [e for e in entries if not e.name.startswith(".") and e.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda e: e.name)


def _load(source: SkillSource, category: str | None, directory: str, stat: os.stat_result,
          cache: ParseCache) -> Skill | Problem:
    file = directory + _SKILL_SUFFIX
    stamp = [stat.st_mtime_ns, stat.st_size]
    memo = cache.loaded.get(file)
    if memo is not None and memo[0] == stamp and (
            isinstance(memo[1], Problem) or memo[1].source == source):
        return memo[1]
    entry = cache.get(file, stamp)
    if entry is None:
        entry = parse_entry(Path(file), os.path.basename(directory)) | {"stamp": stamp}
        cache.put(file, entry)
    loaded: Skill | Problem
    if entry.get("problem"):
        loaded = Problem(Path(file), *entry["problem"])
    else:
        meta = SkillMeta.from_dict(entry["meta"])
        loaded = Skill(meta.name, Path(directory), meta.description, category, source, meta)
    cache.loaded[file] = (stamp, loaded)
    return loaded


def parse_entry(file: Path, directory_name: str) -> dict[str, Any]:
    """``{"meta": ...}`` for a good ``SKILL.md``, else ``{"problem": [field, message]}``."""
    from hermes.memory.scan import find_threat  # only on a cache miss: its patterns cost

    if os.path.islink(file) and not within(file, file.parent):
        return {"problem": ["file", "a symbolic link leading outside the skill, never read"]}
    try:
        text = file.read_text(encoding="utf-8")
        meta, _ = parse_skill_text(text, str(file))
    except (OSError, UnicodeDecodeError) as exc:
        return {"problem": ["file", f"cannot be read ({exc})"]}
    except SkillFormatError as exc:
        return {"problem": [exc.field, exc.problem]}
    if meta.name != directory_name:
        return {"problem": ["name", f"{meta.name!r} differs from its directory "
                                    f"{directory_name!r} — rename one to match"]}
    threat = find_threat(text)
    if threat is not None:
        return {"problem": ["content", f"withheld: {threat.reason()} — edit or delete it"]}
    return {"meta": meta.to_dict()}
