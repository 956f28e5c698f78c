"""A fake model for delegation tests: the parent and every child are separate
conversations, answered from their own queues whatever order their requests arrive in.

A request is a child's when its task prompt (``hermes.delegation.prompt``) is its
system prompt or its first message; the goal in it picks its queue. Children can be
held at a gate, to have them in flight on cue.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from fakellm import FakeLLM, Reply, ToolCall, Turn
from fakellm.recording import RecordedRequest
from hermes.delegation.prompt import ROLE
from hermes.tools.context import ApprovalChoice, ApprovalRequest, Cancelled

GOAL = re.compile(r"## Your task\n\n(.*?)\n\n## ", re.S)


def system_prompt(request: RecordedRequest) -> str:
    messages = request.body.get("messages") or [{}]
    first = messages[0]
    return (first.get("content") or "") if first.get("role") == "system" else ""


def first_user_text(request: RecordedRequest) -> str:
    users = [m for m in request.body.get("messages") or [] if m.get("role") == "user"]
    return str(users[0].get("content") or "") if users else ""


def goal_of(request: RecordedRequest) -> str | None:
    """The goal of the child that sent ``request``; None for the parent's requests. A
    child of ours has the task as its system prompt; an external agent over ACP (another
    profile's ``hermes acp``) gets it as its first message."""
    for text in (system_prompt(request), first_user_text(request)):
        found = GOAL.search(text) if text.startswith(ROLE) else None
        if found:
            return found.group(1)
    return None


class Team:
    """Answers the parent from ``parent`` and each child from its queue (``child``); a
    child without turns left answers ``summary of <goal>``. While ``gate`` is closed,
    children's requests wait at it."""

    def __init__(self, parent: Iterable[Turn] = ()):
        self.parent: deque[Turn] = deque(parent)
        self.children: dict[str, deque[Turn]] = {}
        self.gate = threading.Event()
        self.gate.set()
        self.child_requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def child(self, goal: str, *turns: Turn) -> Team:
        self.children.setdefault(goal, deque()).extend(turns)
        return self

    def __call__(self, request: RecordedRequest) -> Turn:
        goal = goal_of(request)
        if goal is None:
            return self.parent.popleft()
        with self._lock:
            self.child_requests.append(request)
        self.gate.wait(60)
        with self._lock:
            queue = self.children.get(goal)
            return queue.popleft() if queue else Reply(text=f"summary of {goal}")

    def requests_of(self, goal: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.child_requests if goal_of(r) == goal]


def delegate(*goals: str, **fields: Any) -> Reply:
    """The parent's call: one goal, or a batch of several, with ``fields`` beside them."""
    if len(goals) == 1:
        arguments = {"goal": goals[0], **fields}
    else:
        arguments = {"tasks": [{"goal": goal} for goal in goals], **fields}
    return Reply(tool_calls=[ToolCall("delegate_task", arguments)])


def results_of(request: RecordedRequest) -> dict[str, Any]:
    """The delegate_task result the parent's ``request`` carries back to the model."""
    return json.loads(str(request.tool_results[-1].content))


def overlap(spans: Iterable[tuple[float, float]]) -> int:
    """The most spans in flight at one moment."""
    spans = list(spans)
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    most = current = 0
    for _, step in edges:  # at a tie an end (-1) sorts first: touching is not overlapping
        current += step
        most = max(most, current)
    return most


@contextmanager
def serving(team: Team) -> Iterator[FakeLLM]:
    """The fake LLM answering from ``team``; its gate is opened at the end, so no
    child's request is left waiting on it."""
    with FakeLLM(fallback=team) as fake:
        try:
            yield fake
        finally:
            team.gate.set()


class Approver:
    """An approval callback answering from a script, recording what it was asked."""

    def __init__(self, *answers: ApprovalChoice):
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest, cancelled: Cancelled) -> ApprovalChoice:
        self.requests.append(request)
        return self.answers.pop(0)
