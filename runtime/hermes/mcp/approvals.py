"""Dangerous-command approvals of ``hermes mcp serve``: asked of the MCP client.

A turn an MCP client started (``ask``) runs in a worker thread; when one of its
commands needs approval the question waits here, with an id, until the client answers
it (``approval_answer``) or ``timeout`` seconds pass (``approvals.chat_timeout``; then,
or when the turn is interrupted, the command is refused). The client sees the open
questions with ``approvals_list`` while its ``ask`` is still running.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes.tools.context import ApprovalCallback, ApprovalChoice, ApprovalRequest, Cancelled

CHOICES: tuple[ApprovalChoice, ...] = ("once", "session", "always", "deny")
POLL = 0.25
"""Seconds between checks for an interrupt while a question waits."""


@dataclass
class Question:
    id: str
    session_id: str
    request: ApprovalRequest
    asked_at: float = field(default_factory=time.time)
    answered: threading.Event = field(default_factory=threading.Event)
    choice: ApprovalChoice = "deny"

    def describe(self) -> dict[str, Any]:
        return {"approval_id": self.id, "session_id": self.session_id,
                "command": self.request.command, "reason": self.request.reason,
                "allowing_it_for_the_session_or_always_also_allows": self.request.scope,
                "asked_at": self.asked_at}


class PendingApprovals:
    """The open questions of one ``hermes mcp serve`` process."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self._open: dict[str, Question] = {}
        self._lock = threading.Lock()

    def callback(self, session_id: Callable[[], str]) -> ApprovalCallback:
        """The approval callback of one turn; ``session_id`` names its session."""

        def approve(request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
            return self._ask(Question(uuid.uuid4().hex[:12], session_id(), request), cancelled)

        return approve

    def listed(self) -> list[dict[str, Any]]:
        with self._lock:
            return [question.describe() for question in self._open.values()]

    def answer(self, approval_id: str, choice: str) -> str:
        """Answer an open question; raises ``KeyError``/``ValueError`` naming the problem."""
        if choice not in CHOICES:
            raise ValueError(f"choice must be one of {', '.join(CHOICES)}, not {choice!r}")
        with self._lock:
            question = self._open.pop(approval_id, None)
        if question is None:
            raise KeyError(f"no open approval {approval_id!r} (it was answered, timed out, "
                           "or never existed); see approvals_list")
        question.choice = choice  # type: ignore[assignment]  # checked against CHOICES
        question.answered.set()
        return question.request.command

    def _ask(self, question: Question, cancelled: Cancelled) -> ApprovalChoice:
        with self._lock:
            self._open[question.id] = question
        try:
            deadline = time.monotonic() + self.timeout
            while not question.answered.wait(POLL):
                if cancelled() or time.monotonic() >= deadline:
                    return question.choice if question.answered.is_set() else "deny"
            return question.choice
        finally:
            with self._lock:
                self._open.pop(question.id, None)
