"""Finding skills in their sources, with a cache of parsed frontmatter.

A directory holding ``SKILL.md`` is one skill (its sub-directories are its files). A
source's root holds skills at any depth up to ``MAX_DEPTH``: ``<name>/``,
``<category>/<name>/``, hermes-agent's ``<category>/<group>/<name>/``, Claude Code's
``plugins/<plugin>/skills/<name>/`` (``category_of`` names the category). Directories
starting with ``.`` (the archive, the lock file's neighbours) and ``EXCLUDED_DIRS`` are
not searched. A skill is known by its frontmatter ``name`` even where its directory is
called otherwise (as hermes-agent loads it). The first source defining a name wins (the
home, then ``skills.directories`` in order, then the bundled skills); the others are
reported as shadowed. A malformed ``SKILL.md``, one failing the threat scan (text edited
in by hand; findings the user accepted installing it do not count) or one that is a link
leading out of its skill (``links.py``) is skipped and reported once as a ``Problem``;
the home's own can still be edited or deleted (``store.withheld``).

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

CACHE_FORMAT = 6
MAX_DEPTH = 6
"""How many directories deep under a source's root a skill's directory may be."""
EXCLUDED_DIRS = frozenset({"node_modules", "venv", "site-packages", "__pycache__", ".git",
                           ".github", ".hub", ".archive", ".venv", ".tox", ".nox", ".cache"})
"""Never searched for skills. Other directories starting with ``.`` are searched only in
an install's source (openai/skills' ``skills/.curated/``, a project's ``.claude/skills/``),
never in a source of the store (the archive, staging directories)."""
PLUGIN_SKILLS_DIR = "skills"
"""Claude Code's ``<plugin>/skills/<name>/``: the plugin is the category."""
_SKILL_SUFFIX = os.sep + SKILL_FILE
"""Appended to directory paths (strings, not ``Path``: hundreds per listing)."""


@dataclass(frozen=True)
class Problem:
    """Why one ``SKILL.md`` was skipped."""

    file: Path
    field: str
    message: str
    name: str = ""
    """The skill's name: its frontmatter's when that was read, else its directory's."""
    category: str | None = None
    source: SkillSource | None = None

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


def skill_dirs(root: Path, *, hidden: bool = False
               ) -> Iterator[tuple[str | None, str, os.stat_result]]:
    """``(category, directory, stat of its SKILL.md)`` of every skill under ``root``, at
    most ``MAX_DEPTH`` deep (one ``stat`` per directory looked at); ``hidden``: also in
    directories starting with ``.`` (see ``EXCLUDED_DIRS``)."""
    return _walk(str(root), (), hidden)


def _walk(path: str, parents: tuple[str, ...], hidden: bool
          ) -> Iterator[tuple[str | None, str, os.stat_result]]:
    for entry in _subdirs(path, hidden):
        stat = _stat(entry.path + _SKILL_SUFFIX)
        if stat is not None:
            yield category_of(parents), entry.path, stat
        elif len(parents) + 1 < MAX_DEPTH:
            yield from _walk(entry.path, (*parents, entry.name), hidden)


def category_of(parents: Sequence[str]) -> str | None:
    """The category of a skill whose directory is under ``parents`` (the directories
    between the source's root and it): the first of them (hermes-agent's
    ``mlops/training/axolotl`` is in ``mlops``), except in Claude Code's
    ``.../<plugin>/skills/<name>``, where it is the plugin (``skills/<name>``: none).
    Directories starting with ``.`` (``.curated``, ``.claude``) name no category."""
    parts = list(parents)
    if PLUGIN_SKILLS_DIR in parts:
        cut = len(parts) - 1 - parts[::-1].index(PLUGIN_SKILLS_DIR)
        parts = parts[cut - 1:cut] if cut else parts[cut + 1:]
    return parts[0] if parts and not parts[0].startswith(".") else None


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _subdirs(root: Path | str, hidden: bool = False) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as entries:
            found = [e for e in entries if (hidden or not e.name.startswith("."))
                     and e.name not in EXCLUDED_DIRS and e.is_dir()]
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
    withheld = _withheld(entry, source, directory)
    if entry.get("problem") or withheld:
        field_name, message = entry.get("problem") or ["content", withheld]
        loaded = Problem(Path(file), field_name, message,
                         name=entry.get("name") or (entry.get("meta") or {}).get("name")
                         or os.path.basename(directory), category=category, source=source)
    else:
        meta = SkillMeta.from_dict(entry["meta"])
        loaded = Skill(meta.name, Path(directory), meta.description, category, source, meta)
    if not entry.get("findings"):  # else decided again each time: the lock may change
        cache.loaded[file] = (stamp, loaded)
    return loaded


def _withheld(entry: dict[str, Any], source: SkillSource, directory: str) -> str:
    """Why a ``SKILL.md`` with scan findings is withheld ("" when it is not: the user
    accepted each finding when installing it, ``lockfile.accepted_findings``)."""
    findings = entry.get("findings")
    if not findings:
        return ""
    from hermes.skills.lockfile import accepted_findings

    name = entry["meta"]["name"]
    accepted = accepted_findings(source.root, name, Path(directory)) \
        if source.kind == "home" else frozenset()
    new = [finding for finding in findings if finding not in accepted]
    if not new:
        return ""
    more = f" (and {len(new) - 1} more: `hermes skills audit`)" if len(new) > 1 else ""
    return (f"withheld: {new[0].split(': ', 1)[-1]}{more} — fix it with `hermes skills edit "
            f"{name}` or remove it with `hermes skills delete {name}`")


def parse_entry(file: Path, directory_name: str) -> dict[str, Any]:
    """``{"meta": ..., "notes": [...]}`` for a good ``SKILL.md`` (notes: what the loader
    forgave; ``findings``: the scan's, ``guard.scan_content``, which withhold it unless
    accepted), else ``{"problem": [field, message], "name": ...}``."""
    from hermes.skills.guard import scan_content  # only on a cache miss: its patterns cost

    if os.path.islink(file) and not within(file, file.parent):
        return {"problem": ["file", "a symbolic link leading outside the skill, never read"]}
    notes: list[str] = []
    try:
        text = file.read_text(encoding="utf-8")
        meta, _ = parse_skill_text(text, str(file), notes)
    except (OSError, UnicodeDecodeError) as exc:
        return {"problem": ["file", f"cannot be read ({exc})"]}
    except SkillFormatError as exc:
        return {"problem": [exc.field, exc.problem]}
    findings = [str(f) for f in scan_content(SKILL_FILE, text.encode("utf-8"))]
    if meta.name != directory_name:
        notes.append(f"name: {meta.name!r} differs from its directory {directory_name!r}; "
                     f"known as {meta.name}")
    return {"meta": meta.to_dict(), "notes": notes, **({"findings": findings} if findings else {})}
