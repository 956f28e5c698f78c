"""``Jobs``: the jobs of one profile as people and the agent change them, every change
checked first (schedule, delivery target, skills, repeat count) so a refusal writes
nothing. ``hermes cron`` and the ``cronjob`` tool both go through it."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hermes.cron.jobs import Job, JobError
from hermes.cron.schedule import parse_schedule
from hermes.cron.store import JobStore, job_store
from hermes.cron.targets import LOCAL, ORIGIN, Destinations
from hermes.errors import UserError, did_you_mean
from hermes.home import Home
from hermes.skills.store import SkillsStore, skills_store

NAME_CHARS = 40
"""A job without a name is named after the start of its prompt."""
EDITABLE = ("prompt", "name", "schedule", "deliver", "skills", "repeat")


@dataclass
class NewJob:
    """A job as asked for, before it is checked and stored."""

    prompt: str
    schedule: str
    name: str = ""
    deliver: str | None = None
    """None: ``origin`` when created from a chat, else ``local``."""
    skills: list[str] = field(default_factory=list)
    repeat: int | None = None
    origin: Mapping[str, str] | None = None
    created_by: str = "cli"


class Jobs:
    """Checked changes to one profile's jobs."""

    def __init__(self, store: JobStore, skills: SkillsStore, destinations: Destinations):
        self.store = store
        self.skills = skills
        self.destinations = destinations

    def list(self) -> list[Job]:
        return self.store.jobs()

    def get(self, ref: str) -> Job:
        """The job of id (or unique name) ``ref``; ``JobNotFound`` names the closest."""
        return self.store.get(ref)

    def pause(self, ref: str) -> Job:
        return self.store.pause(ref)

    def resume(self, ref: str) -> Job:
        return self.store.resume(ref)

    def remove(self, ref: str) -> Job:
        return self.store.remove(ref)

    def describe(self, job: Job) -> str:
        """The job's schedule for people, in the profile's zone: ``every 2h``, ``once at
        2030-01-31 09:00 CET``, ``cron 0 9 * * * (Europe/Berlin)``."""
        clock = self.store.clock
        try:
            return parse_schedule(job.schedule, clock.now(), future_only=False).describe(
                clock.zone)
        except UserError:
            return job.schedule

    def when(self, iso: str | None) -> str:
        """A stored time (``next_run``, ``last_run``) for people, in the profile's zone
        with the zone named; ``-`` for none."""
        return self.store.clock.show(datetime.fromisoformat(iso)) if iso else "-"

    def create(self, new: NewJob) -> Job:
        """Check ``new`` (schedule, target, repeat) and store it; ``UserError`` otherwise,
        with nothing written."""
        schedule = parse_schedule(new.schedule, self.store.clock.now())
        origin = dict(new.origin) if new.origin else None
        deliver = self.destinations.check(new.deliver or (ORIGIN if origin else LOCAL), origin)
        prompt = _required(new.prompt, "prompt")
        job = Job(id="", name=new.name.strip() or _name_of(prompt), prompt=prompt,
                  schedule=schedule.text, deliver=deliver, skills=self._skills(new.skills),
                  repeat=_repeat(new.repeat), origin=origin, created_by=new.created_by)
        return self.store.add(job, schedule)

    def edit(self, ref: str, changes: Mapping[str, Any]) -> Job:
        """Change a job: ``prompt``, ``name``, ``schedule``, ``deliver``, ``skills``,
        ``repeat`` (checked first; nothing is written when one is refused)."""
        job = self.store.get(ref)
        checked: dict[str, Any] = {}
        for key, value in changes.items():
            checked[key] = self._checked(job, key, value)
        return self.store.update(job.id, **checked)

    def _checked(self, job: Job, key: str, value: Any) -> Any:
        if key == "schedule":
            return parse_schedule(str(value), self.store.clock.now())
        if key == "deliver":
            return self.destinations.check(str(value), job.origin)
        if key == "skills":
            return self._skills(value)
        if key == "repeat":
            return _repeat(value)
        return _required(str(value), key)

    def _skills(self, value: Any) -> builtins.list[str]:
        """Skill names, each one the profile has."""
        names = _names(value)
        for name in names:
            if self.skills.find(name) is None:
                known = [skill.name for skill in self.skills.list()]
                raise JobError(f"skills: no skill {name!r}{did_you_mean(name, known)}; "
                               "`hermes skills list` shows them")
        return names


def profile_jobs(home: Home, environ: Mapping[str, str]) -> Jobs:
    """The jobs of ``home`` as its composed config sets them up (zone, skills, platforms):
    what ``hermes cron`` and the dashboard's Cron page change them through."""
    from hermes.config import compose_config

    config = compose_config(home, environ).config
    return Jobs(job_store(home, config.cron, environ), skills_store(home, config.skills),
                Destinations.of(config.platforms))


def _required(value: str, key: str) -> str:
    if not value.strip():
        raise JobError(f"{key}: empty; a job needs one")
    return value.strip()


def _name_of(prompt: str) -> str:
    first = " ".join(prompt.split())
    return first if len(first) <= NAME_CHARS else first[:NAME_CHARS - 1].rstrip() + "…"


def _names(skills: Any) -> list[str]:
    items = [skills] if isinstance(skills, str) else list(skills or [])
    return list(dict.fromkeys(str(s).strip().lstrip("/") for s in items if str(s).strip()))


def _repeat(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise JobError(f"repeat: {value!r} is not a count of runs (1 or more); leave it "
                       "out to repeat until the job is removed")
    return value
