"""``CronService``: one profile's jobs claimed, run, delivered and recorded.

The gateway ticks it every minute (``hermes.gateway.cron_ticker``), running each claimed job in
a worker thread and delivering through its running platforms; ``hermes cron tick`` and
``hermes cron run`` call ``tick``/``run_now`` here, delivering with ``deliver``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from hermes.agent.conversations import Conversations
from hermes.chats import Target
from hermes.cron.jobs import Job, RunStatus
from hermes.cron.run import Outcome, run_job, save_output
from hermes.cron.store import JobStore
from hermes.cron.targets import Destinations
from hermes.skills.store import SkillsStore

Deliver = Callable[[Target, str], None]
"""Sends a text to a chat (blocking); raises when it cannot."""


@dataclass(frozen=True)
class Report:
    """What one run came to: the job, its outcome and its delivery."""

    job: Job
    outcome: Outcome
    status: RunStatus
    delivered_to: str | None = None
    delivery_error: str | None = None


class CronService:
    """The jobs of one profile and how they run."""

    def __init__(self, store: JobStore, conversations: Conversations, skills: SkillsStore,
                 destinations: Destinations, keep_outputs: int = 50,
                 log: logging.Logger | None = None):
        self.store = store
        self.conversations = conversations
        self.skills = skills
        self.destinations = destinations
        self.keep_outputs = keep_outputs
        self.log = log or logging.getLogger("hermes.cron")

    def tick(self, deliver: Deliver) -> list[Report]:
        """Run every due job once, one after the other (``hermes cron tick``)."""
        return [self.complete(job, self.execute(job), deliver) for job in self.store.claim_due()]

    def run_now(self, ref: str, deliver: Deliver) -> Report:
        """Run one job now, whatever its schedule and state; its schedule is unchanged."""
        job = self.store.claim(ref)
        return self.complete(job, self.execute(job), deliver)

    def execute(self, job: Job) -> Outcome:
        """Run a claimed job and save its output (a worker thread in the gateway)."""
        outcome = run_job(job, self.conversations, self.skills)
        now = self.store.clock.now()
        try:
            path = save_output(job, outcome, self.store.output_dir, now, self.keep_outputs)
        except OSError as exc:
            self.log.error("cron output not saved", extra={"fields": {"job": job.id,
                                                                      "error": str(exc)}})
            return outcome
        return Outcome(outcome.status, outcome.text, outcome.session_id, path)

    def target(self, job: Job, outcome: Outcome) -> Target | None:
        """Where the outcome goes: None for ``local`` and silent answers."""
        if outcome.status == "silent":
            return None
        return self.destinations.target(job.deliver, job.origin)

    @staticmethod
    def message(job: Job, outcome: Outcome) -> str:
        """The text delivered: the answer, or a short notice of the failure."""
        if outcome.status == "error":
            return f"(scheduled job {job.name!r} failed: {outcome.text})"
        return outcome.text

    def complete(self, job: Job, outcome: Outcome, deliver: Deliver) -> Report:
        """Deliver a run's outcome (blocking) and record it."""
        try:
            target = self.target(job, outcome)
            if target is not None:
                deliver(target, self.message(job, outcome))
        except Exception as exc:  # noqa: BLE001 - recorded on the job, the run stays saved
            return self.record(job, outcome, None, str(exc))
        return self.record(job, outcome, target, None)

    def record(self, job: Job, outcome: Outcome, target: Target | None,
               delivery_error: str | None) -> Report:
        """Write how a run ended to the job and the log."""
        status: RunStatus = "undelivered" if delivery_error and outcome.status != "error" \
            else outcome.status
        error = outcome.error or (f"not delivered: {delivery_error}" if delivery_error else None)
        output = str(outcome.output.relative_to(self.store.directory.parent)) \
            if outcome.output else None
        self.store.finish(job.id, status, error, output)
        self.log.info("cron job ran", extra={"fields": {
            "job": job.id, "status": status, "session": outcome.session_id,
            "delivered_to": str(target) if target else None, "error": error}})
        return Report(job, outcome, status, str(target) if target else None, delivery_error)
