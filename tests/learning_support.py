"""A fake model for learning-loop tests: it answers the conversation and the background
review from separate queues (a review request is one whose last user message is a
review pass), and can hold the review's calls at a gate."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from fakellm import FakeLLM, Reply, ToolCall, Turn
from fakellm.recording import RecordedRequest

REVIEW_MARK = "[Background review:"


class Model:
    """Answers chat turns from ``chat`` and review requests from ``review`` (then
    "Nothing to save."); a review request waits while ``gate`` is closed."""

    def __init__(self) -> None:
        self.chat: deque[Turn] = deque()
        self.review: deque[Turn] = deque()
        self.reviews: list[RecordedRequest] = []
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()
        """Set once a review request waits at the closed gate."""

    def __call__(self, request: RecordedRequest) -> Turn:
        if not is_review(request):
            return self.chat.popleft()
        self.reviews.append(request)
        if not self.gate.is_set():
            self.waiting.set()
            self.gate.wait(60)
        return self.review.popleft() if self.review else Reply(text="Nothing to save.")


@contextmanager
def serving(model: Model) -> Iterator[FakeLLM]:
    """The fake LLM answering from ``model``; its gate opens at the end."""
    with FakeLLM(fallback=model) as fake:
        try:
            yield fake
        finally:
            model.gate.set()


def is_review(request: RecordedRequest) -> bool:
    return (request.last_user_text or "").startswith(REVIEW_MARK)


def memory_add(content: str, target: str = "user") -> Reply:
    arguments = {"action": "add", "target": target, "content": content}
    return Reply(tool_calls=[ToolCall("memory", arguments)])


def todo_call() -> Reply:
    return Reply(tool_calls=[ToolCall("todo", {"todos": [{"id": "1", "content": "step"}]})])


def log_lines(root: Path) -> list[dict[str, Any]]:
    """The lines of the home's ``logs/learning.jsonl``."""
    path = root / "logs" / "learning.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def user_notes(root: Path) -> str:
    """The home's ``memories/USER.md`` ('' before anything was saved)."""
    path = root / "memories" / "USER.md"
    return path.read_text() if path.exists() else ""


def configure(root: Path, **sections: dict[str, Any]) -> None:
    """Add config sections (``learning={...}``) to the home's ``config.yaml``."""
    path = root / "config.yaml"
    config = yaml.safe_load(path.read_text()) if path.exists() else {}
    path.write_text(yaml.safe_dump({**config, **sections}, sort_keys=False))
