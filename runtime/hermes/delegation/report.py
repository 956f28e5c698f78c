"""What the parent learns of each child: ``ChildReport``, and the tool result of a batch."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes.delegation.tasks import ChildTask
from hermes.models.types import Usage
from hermes.tools.results import ok

Status = Literal["done", "failed", "budget_exhausted", "interrupted"]
STATUSES: dict[str, Status] = {"completed": "done", "budget_exhausted": "budget_exhausted",
                               "interrupted": "interrupted", "error": "failed"}
"""A child turn's exit reason, as the parent is told it."""


@dataclass(frozen=True)
class ChildReport:
    """How one child ended."""

    task: ChildTask
    status: Status
    summary: str = ""
    """The child's final answer, written for the parent."""
    error: str | None = None
    """Why it failed or stopped, when it did."""
    session_id: str | None = None
    """Its session in this profile's store (``hermes sessions show``)."""
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    agent: str = "hermes"
    """Who ran it: ``hermes`` (a session of this runtime) or an ACP agent's command."""

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "task": self.task.index, "goal": self.task.goal, "status": self.status,
            "summary": self.summary, "session_id": self.session_id, "agent": self.agent,
            "iterations": self.iterations, "cost_usd": self.usage.cost_usd,
            "tokens": {"input": self.usage.input_tokens, "output": self.usage.output_tokens},
            "seconds": round(self.seconds, 2)}
        if self.error:
            data["error"] = self.error
        return data


def ended(exit_reason: str, text: str, error: str | None,
          timed_out: bool = False) -> tuple[Status, str | None]:
    """A child's status and error from how its turn ended. A child stopped for its time
    (``delegation.timeout``) failed; one that answered nothing did too."""
    if timed_out:
        return "failed", "timed out (delegation.timeout) and was stopped"
    status = STATUSES.get(exit_reason, "failed")
    if status == "done" and not text.strip():
        return "failed", "it ended without a summary"
    return status, error


def not_started(task: ChildTask) -> ChildReport:
    """A task the parent's interrupt stopped before its child started."""
    return ChildReport(task, "interrupted", error="interrupted before it started")


def crashed(task: ChildTask, exc: BaseException, seconds: float) -> ChildReport:
    return ChildReport(task, "failed", error=f"{type(exc).__name__}: {exc}", seconds=seconds)


def render(reports: Sequence[ChildReport], left_out: Collection[str] = ()) -> str:
    """The tool result: every child's report in task order, and their total cost (None
    when some child's cost is unknown)."""
    total: Usage = sum((r.usage for r in reports), Usage(cost_usd=0.0))
    extra = {"toolsets_left_out": sorted(left_out)} if left_out else {}
    return ok(results=[r.as_dict() for r in reports], cost_usd=total.cost_usd, **extra)
