"""Finding skills in their sources, with a cache of parsed frontmatter.

A source's root holds ``<name>/SKILL.md`` or ``<category>/<name>/SKILL.md``;
directories starting with ``.`` (the archive, the lock file's neighbours) are not
searched. The first source defining a name wins (the home, then
``skills.directories`` in order, then the bundled skills); the others are reported
as shadowed. A malformed ``SKILL.md``, one whose name differs from its directory,
or one failing the threat scan (text edited in by hand) is skipped and reported
once as a ``Problem``.

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
from hermes.memory.scan import find_threat
from hermes.skills.format import SkillFormatError, SkillMeta, parse_skill_text
from hermes.skills.model import SKILL_FILE, Skill, SkillSource

CACHE_FORMAT = 2


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
    """Parsed frontmatter by file, valid while the file's mtime and size match."""

    def __init__(self, file: Path | None):
        self.file = file
        self.entries: dict[str, Any] = self._load()
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
        if not (self.dirty or gone) or self.file is None or not self.file.parent.parent.is_dir():
            return
        for path in gone:
            del self.entries[path]
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
        for category, directory in skill_dirs(source.root):
            seen.add(str(directory / SKILL_FILE))
            skill = _load(source, category, directory, cache, found.problems)
            if skill is None:
                continue
            if skill.meta is not None and not skill.meta.applies_to(platform):
                found.other_platform.append(skill)
            elif skill.name in winners:
                found.shadowed.append((skill, winners[skill.name]))
            else:
                winners[skill.name] = skill
                found.skills.append(skill)
    cache.save(seen)
    return found


def skill_dirs(root: Path) -> Iterator[tuple[str | None, Path]]:
    """``(category, directory)`` of every directory under ``root`` holding ``SKILL.md``."""
    for entry in _subdirs(root):
        path = Path(entry.path)
        if os.path.isfile(path / SKILL_FILE):
            yield None, path
            continue
        for inner in _subdirs(path):
            if os.path.isfile(os.path.join(inner.path, SKILL_FILE)):
                yield entry.name, Path(inner.path)


def _subdirs(root: Path | str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as entries:
            found = [e for e in entries if not e.name.startswith(".") and e.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda e: e.name)


def _load(source: SkillSource, category: str | None, directory: Path, cache: ParseCache,
          problems: list[Problem]) -> Skill | None:
    file = directory / SKILL_FILE
    try:
        stat = file.stat()
    except OSError:
        return None
    stamp = [stat.st_mtime_ns, stat.st_size]
    entry = cache.get(str(file), stamp)
    if entry is None:
        entry = parse_entry(file, directory.name) | {"stamp": stamp}
        cache.put(str(file), entry)
    if entry.get("problem"):
        problems.append(Problem(file, *entry["problem"]))
        return None
    meta = SkillMeta.from_dict(entry["meta"])
    return Skill(meta.name, directory, meta.description, category, source, meta)


def parse_entry(file: Path, directory_name: str) -> dict[str, Any]:
    """``{"meta": ...}`` for a good ``SKILL.md``, else ``{"problem": [field, message]}``."""
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
