"""Installing skills from a path or a git repository, and updating them.

A source is a local directory or a git URL (``https://``, ``ssh://``, ``git@host:``,
``file://``, or anything ending in ``.git``), optionally followed by ``#subdir``.
What it points at is one skill (a directory holding ``SKILL.md``) or a directory of
skills at any depth the loader searches (``<name>/``, ``<category>/<name>/``,
hermes-agent's ``<category>/<group>/<name>/``, Claude Code's
``plugins/<plugin>/skills/<name>/``: ``discovery.skill_dirs``). Each skill found is
validated and scanned (``guard.scan_tree``) before the caller decides; one meant for
another platform is skipped. Installing copies a skill into the home under
``skills/<category>/<name>/``, ``name`` being its frontmatter's even where its directory
was called otherwise (whole or not at all; at the top where the home's
``skills/<category>/`` is another skill's directory, never inside it), and records the
source, commit and content hash in ``skills/.lock.json``.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hermes.errors import UserError
from hermes.fsutil import private_dir
from hermes.skills.discovery import parse_entry, skill_dirs
from hermes.skills.format import SkillMeta, check_name
from hermes.skills.guard import Finding, relative_parts, scan_tree
from hermes.skills.links import Entry, copy_tree, shown, tree
from hermes.skills.lockfile import (
    LockEntry,
    accepted_record,
    content_hash,
    read_lock,
    write_lock,
)
from hermes.skills.model import SKILL_FILE, Skill, SkillError
from hermes.skills.store import SkillsStore

GIT_PREFIXES = ("https://", "http://", "ssh://", "git://", "file://", "git@")
GIT_TIMEOUT = 300


@dataclass(frozen=True)
class Source:
    """Where skills are fetched from."""

    text: str
    """As the user gave it."""
    location: str
    """The path or git URL, without ``#subdir``."""
    subdir: str
    is_git: bool

    @classmethod
    def parse(cls, text: str) -> Source:
        location, _, subdir = text.partition("#") if "#" in text else (text, "", "")
        is_git = location.startswith(GIT_PREFIXES) or (
            location.endswith(".git") and not Path(location).expanduser().is_dir())
        if subdir and relative_parts(subdir) is None:
            raise UserError(f"{text}: #{subdir} must be a path inside the source")
        if not is_git:  # recorded absolute, so `update` works from any directory
            location = str(Path(location).expanduser().resolve())
            text = f"{location}#{subdir}" if subdir else location
        return cls(text, location, subdir.strip("/") or ".", is_git)


@dataclass
class Fetched:
    """A source's files on this machine (a clone in a temporary directory for git)."""

    source: Source
    root: Path
    """The directory ``#subdir`` names."""
    commit: str | None = None


@dataclass
class Candidate:
    """One skill found in a fetched source, checked but not installed."""

    name: str
    category: str | None
    directory: Path
    subdir: str
    """Its directory relative to the fetched source's top (for updates)."""
    problem: str | None = None
    """Why it cannot be installed at all (a malformed ``SKILL.md``)."""
    skip: str | None = None
    """Why it is left out without an error (meant for another platform)."""
    notes: list[str] = field(default_factory=list)
    """What the loader forgives and the user should know (a name differing from the
    directory, a description cut to the limit)."""
    findings: list[Finding] = field(default_factory=list)
    """What the scan found (installs only with the user's explicit consent)."""
    replaces: Skill | None = None
    """The home's skill of the same name, if any."""

    @property
    def target(self) -> str:
        return f"{self.category}/{self.name}" if self.category else self.name


@contextmanager
def fetch(source: Source) -> Iterator[Fetched]:
    """The source's files; a git clone is removed when the block ends."""
    if not source.is_git:
        base = Path(source.location).expanduser().resolve()
        root = base.joinpath(*relative_parts(source.subdir) or ()) if source.subdir != "." \
            else base
        if not root.is_dir():
            raise UserError(f"{source.text}: no such directory")
        yield Fetched(source, root)
        return
    with tempfile.TemporaryDirectory(prefix="hermes-skill-") as tmp:
        clone = Path(tmp) / "source"
        _git("clone", "--quiet", "--depth", "1", "--", source.location, str(clone), what=source)
        commit = _git("-C", str(clone), "rev-parse", "HEAD", what=source).strip()
        root = clone.joinpath(*relative_parts(source.subdir) or ()) if source.subdir != "." \
            else clone
        if not root.resolve().is_relative_to(clone.resolve()) or not root.is_dir():
            raise UserError(f"{source.text}: the repository has no directory {source.subdir}")
        yield Fetched(source, root, commit)


def _git(*args: str, what: Source) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, env=env,
                              timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise UserError("git is not installed; install it to fetch skills from git") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"{what.text}: git {args[0]} took over {GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise UserError(f"{what.text}: git {args[0]} failed: "
                        f"{lines[-1] if lines else done.returncode}")
    return done.stdout


def find_candidates(fetched: Fetched, store: SkillsStore,
                    category: str | None = None) -> list[Candidate]:
    """Every skill in the fetched source, validated and scanned."""
    if category:
        check_name(category, "--category", "category")
    root = fetched.root
    found = [(None, root)] if (root / SKILL_FILE).is_file() else \
        [(category, Path(directory)) for category, directory, _ in
         skill_dirs(root, hidden=True)]
    if not found:
        raise UserError(f"{fetched.source.text}: no SKILL.md there, nor in its sub-directories")
    top = top_of(fetched)
    return [check_candidate(store, directory, top, category or own_category)
            for own_category, directory in found]


def top_of(fetched: Fetched) -> Path:
    """The fetched tree's top: the clone, or the local path without ``#subdir``."""
    parts = relative_parts(fetched.source.subdir) if fetched.source.subdir != "." else None
    top = fetched.root
    for _ in parts or ():
        top = top.parent
    return top


def check_candidate(store: SkillsStore, directory: Path, top: Path,
                    category: str | None = None) -> Candidate:
    """The skill in ``directory`` validated and scanned; ``top`` is the fetched tree's
    top (its ``subdir`` is relative to it)."""
    entry = parse_entry(directory / SKILL_FILE, directory.name)
    subdir = directory.relative_to(top).as_posix() if directory != top else "."
    if entry.get("problem"):
        field_name, message = entry["problem"]
        return Candidate(entry.get("name") or directory.name, category, directory, subdir,
                         problem=f"{SKILL_FILE}: {field_name}: {message}")
    meta = SkillMeta.from_dict(entry["meta"])
    if not meta.applies_to(store.platform):
        return Candidate(meta.name, category, directory, subdir,
                         skip=f"only for {', '.join(meta.platforms)} (this is "
                              f"{store.platform})")
    category, moved = _place(store, category, meta.name)
    existing = store.find(meta.name)
    return Candidate(meta.name, category, directory, subdir, notes=entry["notes"] + moved,
                     findings=scan_tree(directory),
                     replaces=existing if existing is not None and existing.writable else None)


def _place(store: SkillsStore, category: str | None, name: str
           ) -> tuple[str | None, list[str]]:
    """The category a skill goes under in the home, and a note when it is not its own:
    where the home's ``skills/<category>/`` is a skill's directory (hermes-agent's
    ``optional-skills/dogfood/`` beside its skill ``dogfood``), it goes at the top."""
    owner = skill_above(store.directory, store.directory / category / name) \
        if category else None
    if owner is None:
        return category, []
    return None, [f"{owner}; installed as skills/{name} instead"]


def skill_above(skills_dir: Path, target: Path) -> str | None:
    """Which skill's directory (under ``skills_dir``) holds ``target``, said as
    ``skills/dogfood is the skill dogfood's directory``; None when none does (a skill
    inside another is never found: the outer one's sub-directories are its files)."""
    if not target.is_relative_to(skills_dir):  # a lock edited by hand
        return None
    for above in reversed(target.relative_to(skills_dir).parents[:-1]):
        file = skills_dir / above / SKILL_FILE
        if file.is_file():
            owner = parse_entry(file, above.name).get("meta", {}).get("name", above.name)
            return f"skills/{above.as_posix()} is the skill {owner}'s directory"
    return None


def install(store: SkillsStore, candidate: Candidate, fetched: Fetched) -> Skill:
    """Copy ``candidate`` into the home (replacing a skill of its name) and lock it;
    never into another skill's directory."""
    if candidate.problem or candidate.skip:
        raise SkillError(f"{candidate.name}: {candidate.problem or candidate.skip}")
    entries = read_lock(store.directory)  # an unreadable lock refuses before any copy
    target = store.directory / candidate.target
    owner = skill_above(store.directory, target)
    if owner is not None:
        raise SkillError(f"{candidate.name}: {owner}, where it would never be found; "
                         "install it with --category OTHER")
    if target.exists() and (candidate.replaces is None or candidate.replaces.path != target):
        raise SkillError(f"{candidate.name}: skills/{candidate.target} exists already and "
                         "holds another skill; rename or move one of them")
    _replace_dir(store, candidate.directory, target, candidate.replaces)
    now = store.clock()
    entries[candidate.name] = LockEntry(
        source=fetched.source.text, subdir=candidate.subdir, hash=content_hash(target),
        path=candidate.target, installed=now, updated=now, commit=fetched.commit,
        accepted=_accepted(target, candidate))
    write_lock(store.directory, entries)
    store.state.note_write(candidate.name, "install", "install")
    return store.get(candidate.name)


def apply_update(store: SkillsStore, name: str, candidate: Candidate, fetched: Fetched) -> None:
    """Replace installed skill ``name`` with ``candidate`` and update its lock entry."""
    entries = read_lock(store.directory)
    entry = entries[name]
    target = store.directory / entry.path
    current = store.find(name)
    _replace_dir(store, candidate.directory, target, current if current and current.writable
                 else None)
    entry.hash, entry.commit, entry.updated = content_hash(target), fetched.commit, store.clock()
    entry.accepted = _accepted(target, candidate)
    write_lock(store.directory, entries)
    store.state.note_write(name, "update", "install")


def refusals_of(candidates: Sequence[Candidate], *, yes: bool, force: bool
                ) -> dict[int, str]:
    """Why each skill that cannot be installed now is refused (by the candidate's id):
    malformed, defined twice, already here without ``force``, or scan findings with
    nobody asked (``yes``) and no ``force``."""
    refusals: dict[int, str] = {}
    seen: set[str] = set()
    for c in candidates:
        if c.skip:
            continue
        if c.problem:
            refusals[id(c)] = f"{c.name} cannot be installed ({c.problem})"
        elif c.name in seen:
            refusals[id(c)] = (f"{c.name} is defined twice in this source ({c.subdir}); "
                               "the first is taken")
        elif c.replaces is not None and not force:
            refusals[id(c)] = (f"this profile already has skill {c.name} — `hermes skills "
                               f"update {c.name}`, or pass --force to replace it")
        elif c.findings and yes and not force:
            refusals[id(c)] = (f"the scan found problems in {c.name} (listed above) — pass "
                               "--force to install it anyway")
        seen.add(c.name)
    return refusals


def install_ready(store: SkillsStore, ready: Sequence[Candidate], fetched: Fetched,
                  refusals: dict[int, str]) -> list[Skill]:
    """Install each of ``ready`` (consented to); one whose place is taken is added to
    ``refusals`` and keeps none of the others out."""
    installed = []
    for candidate in ready:
        try:
            installed.append(install(store, candidate, fetched))
        except SkillError as exc:
            refusals[id(candidate)] = str(exc)
    return installed


def _accepted(target: Path, candidate: Candidate) -> dict[str, str]:
    """The findings installed with the user's consent (shown, then --force or a yes)."""
    return accepted_record(target, [(f.file, str(f)) for f in candidate.findings])


def _replace_dir(store: SkillsStore, source: Path, target: Path, old: Skill | None) -> None:
    """Copy ``source`` to ``target`` (replacing ``old``) so it appears whole."""
    staging = store.directory / f".staging-install-{os.getpid()}-{target.name}"
    if staging.exists():
        store.remove_tree(staging)
    private_dir(store.directory)
    copy_tree(source, staging, skip=lambda rel: any(
        part.startswith(".git") for part in rel.split("/")))
    try:
        if old is not None:
            store.remove_tree(old.path)
        private_dir(target.parent)
        staging.rename(target)
    finally:
        if staging.exists():
            store.remove_tree(staging)


def tree_diff(old: Path, new: Path, label: str) -> list[str]:
    """A unified diff of two skill directories (binary files named only; a link shown as
    a link: where it leads when that is inside the skill, else only that it leads out)."""
    before, after = _entries(old), _entries(new)
    lines: list[str] = []
    for rel in sorted(before.keys() | after.keys(), key=lambda rel: rel.split("/")):
        was, now = _lines(before.get(rel)), _lines(after.get(rel))
        if was == now:
            continue
        if was is None or now is None:
            lines.append(f"Binary file {label}/{rel} differs\n")
            continue
        lines += difflib.unified_diff(was, now, f"a/{label}/{rel}", f"b/{label}/{rel}")
    return lines


def _entries(root: Path) -> dict[str, Entry]:
    return {e.rel: e for e in tree(root) if not e.hidden} if root.is_dir() else {}


def _lines(entry: Entry | None) -> list[str] | None:
    """A text file's lines, a link's one line; [] when absent; None when binary."""
    if entry is None:
        return []
    link = shown(entry)
    if link is not None:
        return [link]
    try:
        return entry.path.read_text(encoding="utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
