"""The curator: upkeep of the home's own skills.

A skill's last activity is its last use (``skill_view``, a slash command), creation or
change, else its ``SKILL.md``'s modification time. Unused for ``curator.stale_after``
(30 days) it is marked stale (its next use clears the mark); for
``curator.archive_after`` (90 days) it is moved to ``skills/.archive/`` — never
deleted (``SkillsStore.restore`` brings it back). Only the home's own skills are
curated (bundled and ``skills.directories`` ones are read-only); pinned skills and
skills a cron job names are exempt.

``tick()`` is what the gateway and the warm server call now and then: it runs at most
once per ``curator.interval`` (7 days) and only when the profile has been idle for
``curator.idle`` (2 hours); the very first tick only records its time, so a fresh or
upgraded home is never curated on sight. ``run()`` is ``hermes curator run``: now,
whatever the timings (``dry_run`` reports and changes nothing). Two processes of one
home never curate at once (``skills/.curator.lock``). Every time comes from the
injected clock, so tests use a fake one.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from hermes.config.learning_schema import CuratorConfig
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home
from hermes.learning.log import LearningLog
from hermes.skills.model import Skill
from hermes.skills.state import SkillRecord
from hermes.skills.store import SkillsStore

STATE_FILE = ".curator.json"
LOCK_FILE = ".curator.lock"
RUN_LOCK_TIMEOUT = 30.0


@dataclass(frozen=True)
class CuratorRun:
    """What one run did (or, dry, would do)."""

    when: float
    stale: tuple[str, ...] = ()
    """Marked stale now."""
    archived: tuple[str, ...] = ()
    """Moved to ``skills/.archive/``."""
    exempt: tuple[str, ...] = ()
    """Unused long enough, but pinned or named by a cron job."""
    dry_run: bool = False
    first: bool = False
    """The first tick of this home: only its time was recorded."""

    @property
    def changed(self) -> bool:
        return bool(self.stale or self.archived)


@dataclass(frozen=True)
class CuratorStatus:
    """``hermes curator status``: the timings and what a run would do now."""

    enabled: bool
    last_run: float | None
    next_run: float | None
    """When the interval allows the next automatic run (None: the first tick records)."""
    last_activity: float | None
    idle_until: float | None
    """When the profile will have been idle long enough (None: no activity recorded)."""
    last: dict[str, Any] | None
    """The last real run's outcome, as recorded."""
    plan: CuratorRun
    """What ``hermes curator run`` would do now."""


@dataclass
class _State:
    last_run: float | None = None
    last: dict[str, Any] | None = field(default=None)


class Curator:
    """The curator of one home's skills (see the module docstring)."""

    def __init__(self, skills: SkillsStore, settings: CuratorConfig, *,
                 last_activity: Callable[[], float | None],
                 cron_skills: Callable[[], set[str]] = set,
                 clock: Callable[[], float] = time.time, log: LearningLog | None = None):
        self.skills = skills
        self.settings = settings
        self.last_activity = last_activity
        """Epoch seconds of the profile's latest turn (any session, any process)."""
        self.cron_skills = cron_skills
        self.clock = clock
        self.log = log
        self.state_file = skills.directory / STATE_FILE
        self.lock_file = skills.directory / LOCK_FILE

    # -- deciding -----------------------------------------------------------------------

    def plan(self) -> CuratorRun:
        """What a run would do now, changing nothing."""
        now = self.clock()
        records, protected = self.skills.records(), self.cron_skills()
        stale, archived, exempt = [], [], []
        for skill in self._curated():
            record = records.get(skill.name) or SkillRecord()
            unused = now - _last_active(skill, record)
            if unused < self.settings.stale_after:
                continue
            if record.pinned or skill.name in protected:
                exempt.append(skill.name)
            elif unused >= self.settings.archive_after:
                archived.append(skill.name)
            elif record.stale_since is None:
                stale.append(skill.name)
        return CuratorRun(now, tuple(stale), tuple(archived), tuple(exempt), dry_run=True)

    def _curated(self) -> list[Skill]:
        return [skill for skill in self.skills.list() if skill.writable]

    # -- running ------------------------------------------------------------------------

    def run(self, *, dry_run: bool = False) -> CuratorRun:
        """Curate now, whatever the timings; with ``dry_run`` only report."""
        if dry_run:
            return self.plan()
        with self._lock(RUN_LOCK_TIMEOUT):
            return self._apply()

    def tick(self) -> CuratorRun | None:
        """Curate if due (interval and idle time); the first tick only records its time.
        None when nothing ran (not due, disabled, or another process is curating)."""
        if not self.settings.enabled:
            return None
        try:
            with self._lock(0):
                return self._tick()
        except Timeout:
            return None

    def _lock(self, timeout: float) -> FileLock:
        private_dir(self.lock_file.parent)  # filelock would make it with the umask's mode
        return FileLock(self.lock_file, timeout=timeout, mode=0o600)

    def _tick(self) -> CuratorRun | None:
        state, now = self._load(), self.clock()
        if state.last_run is None:
            first = CuratorRun(now, first=True)
            self._save(_State(now, {"first": True, "when": now}))
            return first
        if now - state.last_run < self.settings.interval:
            return None
        activity = self.last_activity()
        if activity is not None and now - activity < self.settings.idle:
            return None
        return self._apply()

    def _apply(self) -> CuratorRun:
        plan = self.plan()
        for name in plan.stale:
            self.skills.mark_stale(name, by="curator")
        for name in plan.archived:
            self.skills.archive(name, by="curator")
        done = CuratorRun(plan.when, plan.stale, plan.archived, plan.exempt)
        self._save(_State(done.when, _summary(done)))
        if self.log is not None:
            self.log.write({"event": "curator", **_summary(done)})
        return done

    # -- status -------------------------------------------------------------------------

    def status(self) -> CuratorStatus:
        state, activity = self._load(), self.last_activity()
        next_run = state.last_run + self.settings.interval if state.last_run is not None \
            else None
        idle_until = activity + self.settings.idle if activity is not None else None
        return CuratorStatus(self.settings.enabled, state.last_run, next_run, activity,
                             idle_until, state.last, self.plan())

    def _load(self) -> _State:
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return _State()
        if not isinstance(data, dict) or not isinstance(data.get("last_run"), int | float):
            return _State()
        last = data.get("last")
        return _State(float(data["last_run"]), last if isinstance(last, dict) else None)

    def _save(self, state: _State) -> None:
        atomic_write(self.state_file, json.dumps(asdict(state), indent=1), mode=0o600)


def _last_active(skill: Skill, record: SkillRecord) -> float:
    times = [t for t in (record.last_used, record.created, record.updated) if t is not None]
    if times:
        return max(times)
    try:
        return skill.file.stat().st_mtime
    except OSError:
        return 0.0


def _summary(run: CuratorRun) -> dict[str, Any]:
    return {"when": run.when, "stale": list(run.stale), "archived": list(run.archived),
            "exempt": list(run.exempt)}


def cron_skills(jobs_file: Path) -> set[str]:
    """Skill names the cron jobs of a home use: the ``skills`` field (a list of names, or
    one name) of each job in ``cron/jobs.json`` — a list of job objects, or an object
    whose ``jobs`` is that list (or maps ids to jobs). Paused and finished jobs count
    too: resuming one must find its skills. An unreadable file names none."""
    try:
        data = json.loads(jobs_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    jobs: Any = data.get("jobs", []) if isinstance(data, dict) else data
    if isinstance(jobs, dict):
        jobs = list(jobs.values())
    names: set[str] = set()
    for job in jobs if isinstance(jobs, list) else []:
        if isinstance(job, dict):
            names.update(_names(job.get("skills")))
    return names


def _names(value: Any) -> Iterable[str]:
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return (str(item).strip().lstrip("/") for item in items if str(item).strip())


def last_turn_at(database: Path) -> float | None:
    """Epoch seconds of the latest message of any session in ``state.db`` (opened
    read-only: a profile without one has had no turn, and gets none created)."""
    if not database.exists():
        return None
    try:
        uri = f"{database.resolve().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
            row = conn.execute("SELECT max(updated_at) FROM sessions").fetchone()
    except sqlite3.Error:
        return None
    return float(row[0]) if row and row[0] is not None else None


def home_curator(home: Home, skills: SkillsStore, settings: CuratorConfig,
                 clock: Callable[[], float] = time.time) -> Curator:
    """The curator of ``home``: activity from its ``state.db``, exemptions from its cron
    jobs, runs logged to ``logs/learning.jsonl``."""
    from hermes.learning.log import LOG_FILE

    return Curator(skills, settings, last_activity=lambda: last_turn_at(home.sessions_db),
                   cron_skills=lambda: cron_skills(home.cron_dir / "jobs.json"), clock=clock,
                   log=LearningLog(home.logs_dir / LOG_FILE, clock))


def tick_home(home: Home, environ: Mapping[str, str]) -> CuratorRun | None:
    """One curator tick of ``home`` from its composed config (the warm server's ticks;
    the gateway uses its runtime's curator)."""
    from hermes.config import compose_config
    from hermes.skills.store import skills_store

    config = compose_config(home, environ).config
    return home_curator(home, skills_store(home, config.skills), config.curator).tick()
