"""One run of a job: a fresh session without the ``cron`` toolset (a job cannot schedule
jobs), the job's skills loaded into its message, the answer saved under
``cron/output/<job>/``. An answer containing ``[SILENT]`` is saved but not delivered.

The session is a conversation of the runtime's ``Conversations``: a provider without its
key fails the run with that one line before a session exists, and a session the model
never answered (an unreachable endpoint) is discarded when the run ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from hermes.agent.conversations import Conversation, Conversations
from hermes.agent.factory import Interaction
from hermes.cron.jobs import Job
from hermes.errors import UserError
from hermes.fsutil import atomic_write
from hermes.skills.store import SkillsStore

SILENT = "[SILENT]"
CRON_TOOLSET = "cron"
MESSAGING_TOOLSET = "messaging"
"""A run never sends messages itself: its answer is delivered (``--deliver``)."""


@dataclass(frozen=True)
class Outcome:
    """How one run ended."""

    status: Literal["ok", "silent", "error"]
    text: str
    """The answer, or what went wrong."""
    session_id: str | None = None
    output: Path | None = None
    """The saved output file."""

    @property
    def error(self) -> str | None:
        return self.text if self.status == "error" else None


class MissingSkill(UserError):
    """A job names a skill the profile does not have."""


def is_silent(text: str) -> bool:
    return SILENT.lower() in text.lower()


def job_message(job: Job, skills: SkillsStore) -> str:
    """The user message of a run: what the run is, the job's skills, then its prompt."""
    where = "saved to a file" if job.deliver == "local" else "delivered to the user"
    head = (f'[Scheduled job "{job.name}" (id {job.id}): nobody is watching and nobody can '
            f"answer questions. Your final answer is {where}. If there is nothing worth "
            f"reporting this time, answer exactly {SILENT}: the answer is then saved but "
            "not delivered.]")
    blocks = [_skill_block(skills, name, job) for name in job.skills]
    if blocks:
        blocks.insert(0, "Follow these skills for this job:")
    return "\n\n".join([head, *blocks, job.prompt])


def _skill_block(skills: SkillsStore, name: str, job: Job) -> str:
    skill = skills.find(name)
    if skill is None:
        raise MissingSkill(f"skill {name!r} is not installed (`hermes skills list`); change "
                           f"the job's skills: `hermes cron edit {job.id} --skill NAME`")
    body, files = skills.read(skill.name), skills.files(skill.name)
    skills.record_use(skill.name, "cron")
    block = f'<skill name="{skill.name}" directory="{skill.path}">\n{body.strip()}\n</skill>'
    if files:
        block += "\nSupporting files (load with skill_view(name, file)): " + ", ".join(files)
    return block


def run_job(job: Job, conversations: Conversations, skills: SkillsStore) -> Outcome:
    """Run ``job`` once in a new session (its turn counted among the runtime's running
    ones, so a gateway's shutdown interrupts it); never raises for the job's own
    failures."""
    how = Interaction(source="cron", stream=False, interactive=False,
                      without=(CRON_TOOLSET, MESSAGING_TOOLSET))
    try:
        message = job_message(job, skills)
        conversation = conversations.open(how)
    except Exception as exc:  # noqa: BLE001 - a failing job records its error
        return Outcome("error", _describe(exc))
    try:
        result = conversation.run(message)
    except Exception as exc:  # noqa: BLE001
        return Outcome("error", _describe(exc), _kept(conversation))
    session_id = _kept(conversation)
    if result.exit_reason in ("error", "interrupted"):
        return Outcome("error", f"{result.exit_reason}: {result.error or 'no answer'}",
                       session_id)
    status: Literal["ok", "silent"] = "silent" if is_silent(result.text) else "ok"
    return Outcome(status, result.text, session_id)


def _kept(conversation: Conversation) -> str | None:
    """End the run's session: its id, or None when it was discarded (never answered)."""
    ended = conversation.end()
    return ended.session_id if ended.kept else None


def _describe(exc: Exception) -> str:
    return str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"


def save_output(job: Job, outcome: Outcome, directory: Path, now: datetime,
                keep: int) -> Path:
    """Write the run's output file (0600) and remove the job's oldest beyond ``keep``."""
    folder = directory / job.id
    name = f"{now:%Y-%m-%dT%H-%M-%S}-{(outcome.session_id or 'nosession')[:8]}.md"
    lines = [f"# {job.name} (job {job.id})", "",
             f"- run: {now.isoformat(timespec='seconds')}", f"- status: {outcome.status}",
             f"- session: {outcome.session_id or '-'}", f"- schedule: {job.schedule}",
             f"- deliver: {job.deliver}", "", outcome.text.rstrip(), ""]
    atomic_write(folder / name, "\n".join(lines), mode=0o600)
    for old in sorted(folder.glob("*.md"))[:-keep]:
        old.unlink(missing_ok=True)
    return folder / name
