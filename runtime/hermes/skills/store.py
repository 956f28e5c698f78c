"""``SkillsStore``: the skills of one home — find, load, count uses, pin, archive, write.

Sources, first wins for a name: the home's ``skills/`` (the agent's own, writable),
then ``skills.directories`` (read-only, in order), then the bundled skills shipped in
the package (read-only). Beside the skills, ``skills/`` holds ``.state.json`` (uses,
pins, staleness, authors), ``.history.jsonl`` (every write, with who made it),
``.archive/`` (skills the curator archived: never deleted) and ``.lock.json``
(installed skills' sources). One store per runtime; several processes may share a
home (the state is changed under a file lock).

The stable API for the learning loop and the curator: ``list``, ``get``/``find``,
``read``, ``record_use``, ``records``/``usage``, ``pinned``/``pin``/``unpin``,
``stale``/``mark_stale``, ``archive``/``archived``/``restore``, ``changed_since``,
``history``, and the writes (``create``, ``edit``, ``patch``, ``write_file``,
``remove_file``, ``delete``), each taking ``by`` (an ``Actor``) for provenance.
"""

from __future__ import annotations

import builtins
import logging
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes.errors import did_you_mean
from hermes.fsutil import private_dir
from hermes.skills import editing
from hermes.skills.discovery import Discovery, ParseCache, discover
from hermes.skills.guard import relative_parts
from hermes.skills.links import refuse_outside, tree
from hermes.skills.model import (
    SKILL_FILE,
    Actor,
    Skill,
    SkillError,
    SkillNotFound,
    SkillSource,
)
from hermes.skills.state import HistoryEntry, SkillRecord, SkillState

if TYPE_CHECKING:
    from hermes.config.schema import SkillsConfig
    from hermes.home import Home

__all__ = ["BUNDLED_DIR", "Change", "Skill", "SkillError", "SkillNotFound", "SkillRecord",
           "SkillsStore", "skills_store"]

log = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
"""Skills shipped in the package (read-only)."""
ARCHIVE_DIR = ".archive"


@dataclass(frozen=True)
class Change:
    """A skill created or changed since some moment (``changed_since``)."""

    name: str
    kind: str
    """``new`` (created since) or ``changed`` (created before, written since)."""
    by: Actor | None
    when: float


class SkillsStore:
    """The skills of one home (see the module docstring)."""

    def __init__(self, directory: Path, *, directories: Sequence[str | Path] = (),
                 bundled: Path | None = BUNDLED_DIR, cache_file: Path | None = None,
                 clock: Callable[[], float] = time.time, platform: str = sys.platform,
                 index_max_chars: int = 6000,
                 warn: Callable[[str], None] | None = None,
                 plugin_skills: Callable[[], Mapping[str, Path]] | None = None):
        self.directory = directory
        """The home's ``skills/``: the only writable source."""
        extra = [SkillSource("directory", Path(d).expanduser()) for d in directories]
        self.sources = [SkillSource("home", directory), *extra,
                        *([SkillSource("bundled", bundled)] if bundled else [])]
        self.state = SkillState(directory, clock)
        self.clock = clock
        self.platform = platform
        self.index_max_chars = index_max_chars
        """Cap of the system prompt's skills index (``skills.index_max_chars``)."""
        self._cache = ParseCache(cache_file)
        self._lock = threading.Lock()
        self._warn = warn or log.warning
        self._warned: set[str] = set()
        self._plugin_skills = plugin_skills
        """Gives enabled plugins' skills, ``plugin:skill`` -> directory (loads plugins)."""

    # -- reading -----------------------------------------------------------------------

    def scan(self) -> Discovery:
        """Everything in the sources: skills in effect, shadowed ones, problems. Each
        problem is warned about once per store."""
        with self._lock:
            found = discover(self.sources, self._cache, self.platform)
        for problem in found.problems:
            if str(problem) not in self._warned:
                self._warned.add(str(problem))
                self._warn(f"skills: {problem}")
        return found

    def list(self) -> list[Skill]:
        """The skills in effect, one per name, in source order."""
        return self.scan().skills

    def find(self, name: str) -> Skill | None:
        if ":" in name:
            try:
                return self._plugin_skill(name)
            except SkillNotFound:
                return None
        return next((s for s in self.list() if s.name == name), None)

    def get(self, name: str) -> Skill:
        """The skill called ``name``; ``SkillNotFound`` names the closest one. A
        ``plugin:skill`` name is an enabled plugin's (read-only, never in the index)."""
        if ":" in name:
            return self._plugin_skill(name)
        skills = self.list()
        found = next((s for s in skills if s.name == name), None)
        if found is None:
            hint = did_you_mean(name, [s.name for s in skills])
            raise SkillNotFound(f'no skill "{name}"{hint}; `hermes skills list` (or the '
                                "skills_list tool) shows them")
        return found

    def withheld(self, name: str) -> Skill | None:
        """The home's skill ``name`` that the listing skips (malformed, or withheld by the
        scan), to be edited or deleted; None when there is none."""
        for problem in self.scan().problems:
            source = problem.source
            if problem.name == name and source is not None and source.kind == "home":
                return Skill(name, problem.file.parent, "", problem.category, source)
        return None

    def read(self, name: str, file: str | None = None, *, to_edit: bool = False) -> str:
        """The text of ``SKILL.md`` (or of a supporting file) of skill ``name``;
        ``to_edit``: of the home's own skill, withheld ones included (others refused)."""
        skill = editing.writable(self, name, "edit", repair=True) if to_edit else self.get(name)
        path = skill.file if file in (None, "", "SKILL.md") else self.file_path(skill, str(file))
        refuse_outside(path, skill.path, f"{file or SKILL_FILE} of skill {name!r}")
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            files = ", ".join(self.files(name)) or "none"
            raise SkillError(f'skill "{name}" has no file {file!r}; its files: {files}') \
                from None
        except UnicodeDecodeError:
            raise SkillError(f"{file} of skill {name!r} is binary, not text") from None

    def files(self, name: str) -> builtins.list[str]:
        """The skill's supporting files, relative to its directory."""
        skill = self.get(name)
        return sorted(e.rel for e in tree(skill.path) if e.kind != "outside"
                      and e.path.is_file() and e.path.name != SKILL_FILE
                      and not e.path.name.startswith("."))

    @staticmethod
    def file_path(skill: Skill, file: str) -> Path:
        """Where ``file`` (relative) lives in ``skill``; refuses paths that leave it."""
        parts = relative_parts(file)
        if parts is None:
            raise SkillError(f"file {file!r}: give a path inside the skill, e.g. "
                             "references/api.md")
        return skill.path.joinpath(*parts)

    def _plugin_skill(self, name: str) -> Skill:
        from hermes.skills.discovery import parse_entry
        from hermes.skills.format import SkillMeta

        registered = self._plugin_skills() if self._plugin_skills else {}
        directory = registered.get(name)
        if directory is None:
            raise SkillNotFound(f'no plugin skill "{name}"{did_you_mean(name, registered)}; '
                                f"enabled plugins offer: {', '.join(sorted(registered)) or 'none'}")
        entry = parse_entry(directory / "SKILL.md", directory.name)
        if entry.get("problem"):
            raise SkillError(f"plugin skill {name}: {entry['problem'][0]}: {entry['problem'][1]}")
        if entry.get("findings"):  # the plugin's own install scanned it; this is what is now
            raise SkillError(f"plugin skill {name}: withheld: {entry['findings'][0]}")
        meta = SkillMeta.from_dict(entry["meta"])
        return Skill(name, directory, meta.description, None,
                     SkillSource("plugin", directory.parent), meta)

    # -- use, pins, staleness -----------------------------------------------------------

    def record_use(self, name: str, via: str = "view") -> None:
        """Count one use of ``name`` (``skill_view`` or a slash command); a use clears
        staleness. ``via`` says which, for the history's readers."""
        now = self.clock()
        with self.state.change() as records:
            record = records.setdefault(name, SkillRecord())
            record.uses += 1
            record.last_used = now
            record.stale_since = None

    def records(self) -> dict[str, SkillRecord]:
        """Every skill's state by name (uses, pins, staleness, authors)."""
        return self.state.records()

    def usage(self, name: str) -> SkillRecord:
        return self.state.record(name)

    def pinned(self) -> set[str]:
        return {name for name, r in self.records().items() if r.pinned}

    def pin(self, name: str, by: Actor = "user") -> None:
        """Pin ``name``: the curator never archives it, the agent never deletes it."""
        self._set_pin(name, True, by)

    def unpin(self, name: str, by: Actor = "user") -> None:
        self._set_pin(name, False, by)

    def _set_pin(self, name: str, pinned: bool, by: Actor) -> None:
        self.get(name)
        with self.state.change() as records:
            records.setdefault(name, SkillRecord()).pinned = pinned
            self.state.log(HistoryEntry(self.clock(), name, "pin" if pinned else "unpin", by))

    def stale(self) -> set[str]:
        return {name for name, r in self.records().items() if r.stale_since is not None}

    def mark_stale(self, name: str, by: Actor = "curator") -> None:
        """Mark ``name`` stale (unused for long); its next use clears the mark."""
        with self.state.change() as records:
            record = records.setdefault(name, SkillRecord())
            if record.stale_since is None:
                record.stale_since = self.clock()
                self.state.log(HistoryEntry(self.clock(), name, "stale", by))

    # -- archive ------------------------------------------------------------------------

    @property
    def archive_dir(self) -> Path:
        return self.directory / ARCHIVE_DIR

    def archive(self, name: str, by: Actor = "curator") -> Path:
        """Move the home's skill ``name`` to ``skills/.archive/`` (never deleted); its
        place is recorded for ``restore``. Returns the archived directory."""
        skill = editing.writable(self, name, "archive")
        target = self.archive_dir / name
        if target.exists():
            target = self.archive_dir / f"{name}.{int(self.clock())}"
        private_dir(self.archive_dir)
        skill.path.rename(target)
        (target / ".origin").write_text(skill.path.relative_to(self.directory).as_posix())
        editing.remove_empty_category(self, skill)
        self.state.note_write(name, "archive", by)
        return target

    def archived(self) -> builtins.list[str]:
        """Names of archived skills (directory names under ``.archive/``)."""
        if not self.archive_dir.is_dir():
            return []
        return sorted(p.name for p in self.archive_dir.iterdir() if p.is_dir())

    def restore(self, name: str, by: Actor = "user") -> Skill:
        """Bring an archived skill back to where it was."""
        source = self.archive_dir / name
        if not source.is_dir():
            raise SkillNotFound(f'no archived skill "{name}"{did_you_mean(name, self.archived())}')
        origin = (source / ".origin").read_text().strip() if (source / ".origin").exists() \
            else name
        target = self.directory / origin
        existing = self.find(target.name)
        if target.exists() or (existing is not None and existing.writable):
            raise SkillError(f'a skill "{target.name}" exists again; delete or rename it first')
        private_dir(target.parent)
        (source / ".origin").unlink(missing_ok=True)
        source.rename(target)
        self.state.note_write(target.name, "restore", by)
        return self.get(target.name)

    # -- what changed -------------------------------------------------------------------

    def changed_since(self, since: float) -> builtins.list[Change]:
        """Skills created or written at or after ``since`` (epoch seconds), newest first."""
        changes = []
        for name, record in self.records().items():
            if record.created is not None and record.created >= since:
                changes.append(Change(name, "new", record.created_by, record.created))
            elif record.updated is not None and record.updated >= since:
                changes.append(Change(name, "changed", record.updated_by, record.updated))
        return sorted(changes, key=lambda c: -c.when)

    def history(self) -> builtins.list[HistoryEntry]:
        """Every recorded write, oldest first."""
        return self.state.history()

    # -- writes (see editing.py) --------------------------------------------------------

    def create(self, name: str, content: str, *, category: str | None = None,
               by: Actor = "agent") -> Skill:
        """A new skill in the home: ``content`` is its whole ``SKILL.md``."""
        return editing.create(self, name, content, category, by)

    def edit(self, name: str, content: str, *, by: Actor = "agent") -> Skill:
        """Replace the home skill's whole ``SKILL.md``."""
        return editing.edit(self, name, content, by)

    def patch(self, name: str, old: str, new: str, *, file: str | None = None,
              replace_all: bool = False, by: Actor = "agent") -> int:
        """Find ``old`` and put ``new`` in ``SKILL.md`` (or ``file``); how many places."""
        return editing.patch(self, name, old, new, file, replace_all, by)

    def write_file(self, name: str, file: str, content: str, *, by: Actor = "agent") -> Path:
        """Add or replace a supporting file (under references/, templates/, scripts/,
        assets/)."""
        return editing.write_file(self, name, file, content, by)

    def remove_file(self, name: str, file: str, *, by: Actor = "agent") -> None:
        editing.remove_file(self, name, file, by)

    def delete(self, name: str, *, by: Actor = "agent") -> None:
        """Delete the home's skill ``name`` (pinned ones are refused)."""
        editing.delete(self, name, by)

    def remove_tree(self, path: Path) -> None:
        """Remove a directory under ``skills/`` (rename first, so it vanishes at once)."""
        doomed = path.with_name(f".deleting-{path.name}-{time.monotonic_ns()}")
        path.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)


def skills_store(home: Home, settings: SkillsConfig | None = None,
                 clock: Callable[[], float] = time.time,
                 plugin_skills: Callable[[], Mapping[str, Path]] | None = None) -> SkillsStore:
    """The store of ``home`` as ``settings`` (``skills.*``) configure it; relative
    ``skills.directories`` are relative to the home; ``plugin_skills`` gives enabled
    plugins' skills."""
    from hermes.config.schema import SkillsConfig

    settings = settings or SkillsConfig()
    directories = [home.path / Path(d).expanduser() for d in settings.directories]
    return SkillsStore(home.skills_dir, directories=directories,
                       bundled=BUNDLED_DIR if settings.bundled else None,
                       cache_file=home.path / ".cache" / "skills.json", clock=clock,
                       index_max_chars=settings.index_max_chars, plugin_skills=plugin_skills)
