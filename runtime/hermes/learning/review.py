"""One background review: an agent run over a snapshot of a conversation.

The review agent gets the session's system prompt and transcript as they were when
the turn ended, then one user turn per pass (``prompts``), with the review's own
model, iteration budget and tool registry (only the memory and skill tools; skill
writes are recorded as made by ``review``). Nothing it says is stored in the
session: its prompts would read as the user's instructions the next time the
session is opened. What it changed is read from its successful tool calls.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hermes.agent.conversations import Conversation
from hermes.agent.dispatch import CallOutcome
from hermes.agent.loop import Agent, AgentEvents
from hermes.environments.base import Environment
from hermes.home import Home
from hermes.learning.nudges import MEMORY_WRITER, SKILL_WRITER, Pass
from hermes.learning.prompts import PROMPTS
from hermes.models.base import ModelClient
from hermes.sessions.store import SessionStore
from hermes.tools.context import ToolContext
from hermes.tools.registry import ToolRegistry


@dataclass(frozen=True)
class Change:
    """One thing a review saved."""

    kind: Literal["memory", "skill"]
    action: str
    """memory: add, replace, remove; skill: create, patch, edit, write_file, remove_file,
    delete."""
    target: str
    """memory: the file (``memory`` or ``user``); skill: the skill's name."""

    def describe(self) -> str:
        if self.kind == "memory":
            return "memory updated"
        verb = {"create": "created", "delete": "deleted"}.get(self.action, "updated")
        return f"skill {self.target} {verb}"


@dataclass(frozen=True)
class ReviewRequest:
    """What to review: a session's transcript when its turn ended, and which passes."""

    session_id: str
    snapshot: tuple[Mapping[str, Any], ...]
    passes: tuple[Pass, ...]


@dataclass(frozen=True)
class ReviewOutcome:
    """How a review went and what it changed."""

    session_id: str
    passes: tuple[Pass, ...]
    changes: tuple[Change, ...]
    iterations: int
    seconds: float
    model: str
    error: str | None = None
    interrupted: bool = False

    def summary(self) -> str | None:
        """One line for the user (``memory updated; skill x created``), None if nothing."""
        described = dict.fromkeys(change.describe() for change in self.changes)
        return "; ".join(described) or None


class UnsavedSessions(SessionStore):
    """The review agent's session store: it keeps nothing (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(Path("/nonexistent/review-is-not-saved.db"))

    def add_message(self, session_id: str, role: str, content: str | None,
                    **_: Any) -> int:
        return 0

    def end_session(self, session_id: str, end_reason: str = "completed") -> None:
        return None

    def rename(self, session_id: str, title: str) -> None:
        return None


@dataclass(frozen=True)
class Reviewer:
    """Builds and runs review agents for one runtime."""

    home: Home
    environment: Environment
    environ: Mapping[str, str]
    model: ModelClient
    """``learning.model`` at the main provider, else the main model."""
    tools: ToolRegistry
    """Only the memory and skill tools (see ``service.review_tools``)."""
    max_iterations: int
    """Model calls per pass (``learning.max_iterations``)."""
    timeout: float
    """Seconds the whole review may take (``learning.timeout``)."""

    def can_run(self, name: Pass) -> bool:
        """Whether the tools of a pass are there (the memory tool, ``skill_manage``)."""
        return self.tools.get(MEMORY_WRITER if name == "memory" else SKILL_WRITER) is not None

    def start(self, request: ReviewRequest) -> ReviewRun:
        return ReviewRun(self, request)


class ReviewRun:
    """One review in progress; ``run()`` blocks (call it from a worker thread)."""

    def __init__(self, reviewer: Reviewer, request: ReviewRequest):
        self.reviewer = reviewer
        self.request = request
        self.changes: list[Change] = []
        self.stopped = threading.Event()
        self.agent = self._agent()
        self.conversation = Conversation(None, self.agent)
        """The review's own conversation on the one path (``hermes.agent.conversations``),
        with its settings: its session is the reviewed one's snapshot, kept nowhere, and
        counted in no runtime's running turns (the review runs beside them)."""

    def _agent(self) -> Agent:
        r, request = self.reviewer, self.request
        context = ToolContext.for_session(r.home, r.environment, request.session_id,
                                          environ=r.environ)
        return Agent(model=r.model, tools=r.tools, store=UnsavedSessions(),
                     tool_context=context, session_id=request.session_id,
                     messages=[dict(message) for message in request.snapshot],
                     max_iterations=r.max_iterations, stream=False,
                     events=AgentEvents(on_tool_end=self._saw))

    def stop(self) -> None:
        """Interrupt the review; what it saved so far stays."""
        self.stopped.set()
        self.conversation.interrupt()

    def run(self) -> ReviewOutcome:
        started = time.monotonic()
        timer = threading.Timer(self.reviewer.timeout, self.stop)
        timer.daemon = True
        timer.start()
        iterations, error, interrupted = 0, None, False
        try:
            for name in self.request.passes:
                if self.stopped.is_set():  # a turn would clear the interrupt: check first
                    interrupted = True
                    break
                result = self.conversation.run(PROMPTS[name])
                iterations += result.iterations
                error = error or result.error
                if result.exit_reason == "interrupted":
                    interrupted = True
                    break
        finally:
            timer.cancel()
        return ReviewOutcome(self.request.session_id, self.request.passes, tuple(self.changes),
                             iterations, time.monotonic() - started, self.reviewer.model.model,
                             error, interrupted)

    def _saw(self, outcome: CallOutcome) -> None:
        if not outcome.is_error:
            self.changes.extend(changes_of(outcome))


def changes_of(outcome: CallOutcome) -> list[Change]:
    """What a successful memory or skill_manage call changed."""
    args = _arguments(outcome)
    if outcome.call.name == MEMORY_WRITER:
        operations = args.get("operations") or [args]
        return [Change("memory", str(op.get("action")), str(op.get("target")))
                for op in operations if isinstance(op, Mapping)]
    if outcome.call.name == SKILL_WRITER:
        return [Change("skill", str(args.get("action")), str(args.get("name", "")).strip())]
    return []


def _arguments(outcome: CallOutcome) -> Mapping[str, Any]:
    validated = getattr(outcome.result, "arguments", None)
    if isinstance(validated, Mapping):
        return validated
    try:
        parsed = json.loads(outcome.call.arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, Mapping) else {}

