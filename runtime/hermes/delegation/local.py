"""A child that is a session of this runtime: one turn of an agent the factory builds,
run as a ``Conversation`` of its own (the parent's turn is the one counted)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from hermes.agent.conversations import Conversation
from hermes.delegation.batch import Child
from hermes.delegation.report import ChildReport, ended
from hermes.delegation.tasks import ChildTask

if TYPE_CHECKING:
    from hermes.agent.loop import Agent


class LocalChild(Child):
    """Runs its task as the first (and only) turn of a new child session."""

    def __init__(self, task: ChildTask, open_agent: Callable[[], Agent],
                 started: Callable[[str], None] = lambda _session_id: None):
        super().__init__(task)
        self._open_agent = open_agent
        self._started = started
        """Told the child's session once it exists (``subagent_start``)."""
        self._conversation: Conversation | None = None
        self._lock = threading.Lock()

    def run(self) -> ChildReport:
        started = time.monotonic()
        conversation = Conversation(None, self._open_agent())
        with self._lock:
            self._conversation = conversation
        self._started(conversation.session_id)
        try:
            result = conversation.run(self.task.goal)
        finally:  # kept even unanswered: the parent's report names the session
            conversation.end(keep=True)
        status, error = ended(result.exit_reason, result.text, result.error, self.timed_out)
        return ChildReport(self.task, status, summary=result.text, error=error,
                           session_id=conversation.session_id, iterations=result.iterations,
                           usage=result.usage, seconds=time.monotonic() - started)

    def interrupt(self) -> None:
        with self._lock:
            conversation = self._conversation
        if conversation is not None:
            conversation.interrupt()
