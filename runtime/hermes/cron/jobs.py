"""One scheduled job as ``cron/jobs.json`` holds it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from hermes.errors import UserError


class JobError(UserError):
    """A job that cannot be stored as asked (its target, repeat count, skills, ...)."""


JobState = Literal["scheduled", "paused", "completed"]
RunStatus = Literal["ok", "silent", "error", "undelivered", "running"]
"""``ok``: ran (and was delivered, if it goes anywhere); ``silent``: ran and answered
``[SILENT]``, so nothing was delivered; ``error``: the run failed; ``undelivered``: it ran
but its delivery failed; ``running``: a run is under way (``running_pid``)."""


@dataclass
class Job:
    """A prompt the agent runs on a schedule, in a fresh session, and where its answer goes."""

    id: str
    name: str
    prompt: str
    schedule: str
    """As parsed (``hermes.cron.schedule``): a once-schedule is stored as its time."""
    deliver: str = "local"
    """``local`` (the output file only), ``origin`` (the chat that created the job), a
    platform's name (its ``home_channel``) or ``platform:chat_id[:thread]``."""
    skills: list[str] = field(default_factory=list)
    """Skills loaded into each run, by name."""
    repeat: int | None = None
    """Runs in all, then the job is completed; None: until removed (once-schedules: 1)."""
    runs: int = 0
    state: JobState = "scheduled"
    next_run: str | None = None
    """ISO time with its offset; None once completed."""
    last_run: str | None = None
    last_status: RunStatus | None = None
    last_error: str | None = None
    last_output: str | None = None
    """The last run's output file, relative to the home."""
    running_pid: int | None = None
    """The process running the job now (a run it left behind when it died is failed)."""
    origin: dict[str, str] | None = None
    """The chat that created the job (a ``MessageSource``'s fields), for ``origin``."""
    created_at: str = ""
    created_by: str = "cli"
    """``cli`` or ``agent`` (the cronjob tool)."""

    def next_time(self) -> datetime | None:
        return datetime.fromisoformat(self.next_run) if self.next_run else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Job:
        """A stored job; keys this version does not know are ignored."""
        return cls(**{k: v for k, v in data.items() if k in FIELDS})


FIELDS = frozenset(f.name for f in fields(Job))
