"""The jobs of one home: ``cron/jobs.json``, changed under ``cron/jobs.lock``.

Every change reads the whole file, changes it and writes it back atomically (0600)
while holding the lock, so the gateway, ``hermes cron`` and the agent's ``cronjob``
tool never lose each other's edits. A tick claims its due jobs the same way: under the
lock it marks them running (with its pid) and moves their next run on, so another
gateway or ``hermes cron tick`` on the same home never runs them a second time. A run
left marked by a process that died is recorded as failed by the next claim.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from hermes.config.cron_schema import CronConfig
from hermes.config.zones import profile_zone
from hermes.cron.clock import Clock
from hermes.cron.jobs import Job, RunStatus
from hermes.cron.schedule import Schedule, parse_schedule
from hermes.errors import UserError, did_you_mean
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

JOBS_FILE, LOCK_FILE, OUTPUT_DIR = "jobs.json", "jobs.lock", "output"


class JobNotFound(UserError):
    """No job of that id or name."""


class JobStore:
    """``cron/jobs.json`` of one home."""

    def __init__(self, directory: Path, clock: Clock):
        self.directory = directory
        self.path = directory / JOBS_FILE
        self.clock = clock
        self._lock = FileLock(str(directory / LOCK_FILE), mode=0o600)

    @property
    def output_dir(self) -> Path:
        return self.directory / OUTPUT_DIR

    def jobs(self) -> list[Job]:
        """Every job, in creation order (read without the lock: writes are atomic)."""
        return [Job.from_json(item) for item in self._read()]

    def get(self, ref: str) -> Job:
        return _find(self.jobs(), ref)

    def add(self, job: Job, schedule: Schedule) -> Job:
        """Store a new job (its id, times and state are set here)."""
        now = self.clock.now()
        with self._locked() as jobs:
            job.id = _new_id({j.id for j in jobs})
            job.schedule, job.created_at = schedule.text, _iso(now)
            job.next_run, job.state = _iso(schedule.first(now)), "scheduled"
            self._save([*jobs, job])
        return job

    def update(self, ref: str, **changes: Any) -> Job:
        """Change fields of a job; a new ``schedule`` (a ``Schedule``) starts over from now."""
        with self._locked() as jobs:
            job = _find(jobs, ref)
            schedule = changes.pop("schedule", None)
            for key, value in changes.items():
                setattr(job, key, value)
            if schedule is not None:
                self._reschedule(job, schedule)
            self._save(jobs)
        return job

    def pause(self, ref: str) -> Job:
        with self._locked() as jobs:
            job = _find(jobs, ref)
            if job.state == "completed":
                raise UserError(f"job {job.id} is completed; give it a new schedule first: "
                                f"`hermes cron edit {job.id} --schedule ...`")
            job.state = "paused"
            self._save(jobs)
        return job

    def resume(self, ref: str) -> Job:
        """Schedule a paused job again; a repeating one's slots missed meanwhile are skipped."""
        now = self.clock.now()
        with self._locked() as jobs:
            job = _find(jobs, ref)
            if job.state != "paused":
                raise UserError(f"job {job.id} is {job.state}, not paused")
            due = job.next_time()
            if due is not None and due <= now:
                following = parse_schedule(job.schedule, now, future_only=False).after(due, now)
                job.next_run = _iso(following or due)
            job.state = "scheduled"
            self._save(jobs)
        return job

    def remove(self, ref: str) -> Job:
        with self._locked() as jobs:
            job = _find(jobs, ref)
            self._save([j for j in jobs if j is not job])
        return job

    def claim_due(self) -> list[Job]:
        """Mark the jobs due now as running in this process and move their next run on;
        the claimed jobs. Runs abandoned by a dead process are failed first."""
        now = self.clock.now()
        with self._locked(lazy=lambda raw: any(_may_claim(item, now) for item in raw)) as jobs:
            changed = _fail_abandoned(jobs)
            due = [j for j in jobs if j.state == "scheduled" and j.running_pid is None
                   and j.next_run is not None and datetime.fromisoformat(j.next_run) <= now]
            for job in due:
                self._start(job, now)
                self._advance(job, now)
            if due or changed:
                self._save(jobs)
        return due

    def claim(self, ref: str) -> Job:
        """Mark one job running now (``hermes cron run``): its schedule is unchanged."""
        with self._locked() as jobs:
            _fail_abandoned(jobs)
            job = _find(jobs, ref)
            if job.running_pid is not None:
                raise UserError(f"job {job.id} is running already (pid {job.running_pid})")
            self._start(job, self.clock.now())
            self._save(jobs)
        return job

    def running(self, job: Job) -> bool:
        """Whether a run of ``job`` is under way: its process is alive (one that died
        mid-run left ``running`` behind, failed by the next claim)."""
        return job.running_pid is not None and _alive(job.running_pid)

    def finish(self, job_id: str, status: RunStatus, error: str | None,
               output: str | None) -> None:
        """Record how a claimed run ended (a job removed meanwhile is left removed)."""
        with self._locked() as jobs:
            job = next((j for j in jobs if j.id == job_id), None)
            if job is None:
                return
            job.last_status, job.last_error, job.running_pid = status, error, None
            job.last_output = output or job.last_output
            self._save(jobs)

    def _start(self, job: Job, now: datetime) -> None:
        job.running_pid, job.last_run, job.last_status = os.getpid(), _iso(now), "running"
        job.last_error = None

    def _advance(self, job: Job, now: datetime) -> None:
        job.runs += 1
        due = job.next_time()
        following = parse_schedule(job.schedule, now, future_only=False).after(due, now) \
            if due is not None else None
        if following is None or (job.repeat is not None and job.runs >= job.repeat):
            job.next_run, job.state = None, "completed"
        else:
            job.next_run = _iso(following)

    def _reschedule(self, job: Job, schedule: Schedule) -> None:
        now = self.clock.now()
        job.schedule, job.next_run, job.runs = schedule.text, _iso(schedule.first(now)), 0
        if job.state == "completed":
            job.state = "scheduled"

    @contextmanager
    def _locked(self, lazy: Callable[[list[dict[str, Any]]], bool] = lambda raw: True
                ) -> Iterator[list[Job]]:
        """The jobs, under the lock; none when ``lazy`` finds nothing to do in the stored
        ones (a tick with nothing due reads the file and builds no ``Job``)."""
        private_dir(self.directory)
        with self._lock:
            raw = self._read()
            yield [Job.from_json(item) for item in raw] if lazy(raw) else []

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as exc:
            raise UserError(f"{self.path}: not valid JSON ({exc}); fix or remove the file") \
                from None
        jobs = data.get("jobs") if isinstance(data, dict) else None
        if not isinstance(jobs, list):
            raise UserError(f'{self.path}: expected {{"jobs": [...]}}; fix or remove the file')
        return jobs

    def _save(self, jobs: list[Job]) -> None:
        text = json.dumps({"jobs": [job.to_json() for job in jobs]}, indent=2)
        atomic_write(self.path, text + "\n", mode=0o600)


def _new_id(taken: set[str]) -> str:
    while (job_id := secrets.token_hex(4)) in taken:
        pass
    return job_id


def _iso(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


def _find(jobs: list[Job], ref: str) -> Job:
    ref = ref.strip()
    found = [j for j in jobs if j.id == ref] or [j for j in jobs if j.name == ref]
    if len(found) == 1:
        return found[0]
    if found:
        raise UserError(f"{len(found)} jobs are named {ref!r}; name one by its id: "
                        + ", ".join(j.id for j in found))
    hint = did_you_mean(ref, [j.id for j in jobs] + [j.name for j in jobs])
    raise JobNotFound(f"no job {ref!r}{hint}; `hermes cron list` shows the jobs")


def _may_claim(item: dict[str, Any], now: datetime) -> bool:
    """Whether a stored job is due, or its run was abandoned (checked on the raw JSON)."""
    pid, due = item.get("running_pid"), item.get("next_run")
    if pid is not None:
        return not _alive(pid)
    if item.get("state", "scheduled") != "scheduled" or not isinstance(due, str):
        return False
    return datetime.fromisoformat(due) <= now


def _fail_abandoned(jobs: list[Job]) -> bool:
    """Fail runs whose process is gone (it died mid-run); whether any was."""
    changed = False
    for job in jobs:
        if job.running_pid is not None and not _alive(job.running_pid):
            job.last_status, job.running_pid = "error", None
            job.last_error = "interrupted: the process running it ended during the run"
            changed = True
    return changed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def job_store(home: Home, settings: CronConfig, environ: Mapping[str, str]) -> JobStore:
    """The jobs of ``home``, their times in ``cron.timezone`` (else the machine's zone)."""
    return JobStore(home.cron_dir, Clock(profile_zone(settings.timezone, environ)))
