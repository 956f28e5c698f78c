"""``LearningService``: the background reviews of one runtime's sessions.

The agent factory subscribes each session's nudge counters to its event bus (``watch``:
``tools_ran``, ``turn_ended``). When a completed turn makes a pass due, they take a
snapshot of the transcript and ``submit`` starts a review in a daemon thread: the
turn returns at once, so the answer and the user's next turn never wait for it. One
review at a time per session, in this process and in any other of the home
(``locks``): a due review that finds one running waits for a later turn. A front end
that is still delivering the answer (the CLI printing it, the warm server answering
its client) ``hold``s reviews back and ``release``s them when it is done, so a review
never competes with the turn that started it. When a review ends it is logged and
every listener hears of it (chat prints "learned: ..."). ``wait`` lets a process that
is about to exit give running reviews a bounded time to finish; ``stop_all``
interrupts them (what they saved stays).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from hermes.agent.dispatch import CallOutcome
from hermes.agent.loop import Agent, TurnResult
from hermes.config.learning_schema import LearningConfig
from hermes.environments.base import Environment
from hermes.events import HookBus
from hermes.home import Home
from hermes.learning.locks import ReviewLocks
from hermes.learning.log import LOG_FILE, LearningLog
from hermes.learning.nudges import NudgeCounter
from hermes.learning.review import Reviewer, ReviewOutcome, ReviewRequest, ReviewRun
from hermes.models.base import ModelClient
from hermes.tools.base import ToolSpec
from hermes.tools.registry import ToolRegistry, build_tool_registry

REVIEW_TOOLSETS = ("memory", "skills")
Listener = Callable[[ReviewOutcome], None]
log = logging.getLogger(__name__)


class LearningService:
    """Starts, tracks and reports the background reviews of one runtime."""

    def __init__(self, settings: LearningConfig, reviewer: Reviewer, log_file: LearningLog,
                 locks: ReviewLocks | None = None):
        self.settings = settings
        self.reviewer = reviewer
        self.log = log_file
        self.locks = locks
        """Keeps other processes of the home from reviewing the same session at once."""
        self._runs: dict[str, ReviewRun | None] = {}
        """Running reviews by session id (None while the run is being built)."""
        self._changed = threading.Condition()
        self._listeners: list[Listener] = []
        self._released = threading.Event()
        self._released.set()
        self._stopping = False
        self._held = 0
        """Set by ``stop_all`` until no review runs: a review still being built stops too."""

    def watch(self, bus: HookBus, messages: Iterable[Mapping[str, Any]]) -> None:
        """Count the turns of the session of ``bus`` (its transcript so far:
        ``messages``) and start a review when one is due; nothing when learning is off."""
        memory_every = self.settings.memory_nudge_turns if self.reviewer.can_run("memory") else 0
        skills_every = (self.settings.skill_nudge_iterations
                        if self.reviewer.can_run("skills") else 0)
        if not self.settings.enabled or not (memory_every or skills_every):
            return
        SessionLearning(self, NudgeCounter.from_history(messages, memory_every,
                                                        skills_every)).subscribe(bus)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every review's outcome (on the review's thread);
        returns the function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def submit(self, request: ReviewRequest) -> bool:
        """Start a review in the background; False if one of that session is running."""
        with self._changed:
            if request.session_id in self._runs:
                return False
            lock = self.locks.take(request.session_id) if self.locks else None
            if self.locks and lock is None:
                return False
            self._runs[request.session_id] = None
        threading.Thread(target=self._work, args=(request, lock), daemon=True,
                         name=f"review-{request.session_id[:8]}").start()
        return True

    def hold(self) -> None:
        """Reviews submitted from now on wait to start until ``release``."""
        self._released.clear()

    def release(self) -> None:
        """Let held reviews start (and later ones start at once)."""
        self._released.set()

    def held(self) -> int:
        """Reviews waiting for ``release`` to start."""
        with self._changed:
            return self._held

    def running(self) -> int:
        with self._changed:
            return len(self._runs)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no review runs (their outcomes reported); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._runs, timeout)

    def stop_all(self) -> int:
        """Interrupt every running review (and any about to start); how many."""
        with self._changed:
            self._stopping = bool(self._runs)
            runs = [run for run in self._runs.values() if run is not None]
            count = len(self._runs)
        for run in runs:
            run.stop()
        self.release()  # a held review starts only to find itself stopped
        return count

    def _work(self, request: ReviewRequest, lock: int | None) -> None:
        try:
            outcome = self._run(request)
            self.log.review(outcome)
            for listener in list(self._listeners):
                listener(outcome)
        except Exception:  # noqa: BLE001 - a failed review must never reach the session
            log.exception("background review of session %s failed", request.session_id)
        finally:
            if lock is not None:
                ReviewLocks.give_back(lock)
            with self._changed:
                self._runs.pop(request.session_id, None)
                self._stopping = self._stopping and bool(self._runs)
                self._changed.notify_all()

    def _run(self, request: ReviewRequest) -> ReviewOutcome:
        with self._changed:
            self._held += 1
        try:
            self._released.wait()
        finally:
            with self._changed:
                self._held -= 1
        run = self.reviewer.start(request)
        with self._changed:
            self._runs[request.session_id] = run
            if self._stopping:
                run.stop()
        return run.run()


class SessionLearning:
    """One agent's nudge counters; starts a review when a completed turn makes one due.
    Inline observers: they return at once (a review starts in its own thread)."""

    def __init__(self, service: LearningService, counter: NudgeCounter):
        self.service = service
        self.counter = counter

    def subscribe(self, bus: HookBus) -> None:
        bus.subscribe("tools_ran", self.tools_ran, "learning", inline=True)
        bus.subscribe("turn_ended", self.turn_ended, "learning", inline=True)

    def tools_ran(self, outcomes: Sequence[CallOutcome], **_: Any) -> None:
        self.counter.tools_ran(outcomes)

    def turn_ended(self, agent: Agent, result: TurnResult, **_: Any) -> None:
        due = self.counter.turn_ended()
        if result.exit_reason != "completed" or not due.passes:
            return
        snapshot = tuple(dict(message) for message in agent.messages)
        if self.service.submit(ReviewRequest(agent.session_id, snapshot, due.passes)):
            self.counter.started(due)


def review_tools(main: ToolRegistry, specs: Sequence[ToolSpec],
                 environ: Mapping[str, str]) -> ToolRegistry:
    """The review's registry: ``specs`` (the memory tools, the skill tools writing as
    ``review``) in the memory and skills toolsets the runtime has enabled, minus the
    tools it disabled."""
    active = main.active_toolsets()
    enabled = [name for name in REVIEW_TOOLSETS if name in active]
    return build_tool_registry(enabled, main.disabled_tools, environ=environ, specs=specs,
                               ripgrep=None)


def build_learning(*, home: Home, settings: LearningConfig, main_tools: ToolRegistry,
                   specs: Sequence[ToolSpec], environment: Environment,
                   environ: Mapping[str, str], model: ModelClient) -> LearningService:
    """The learning service of one runtime (the container's ``learning``)."""
    reviewer = Reviewer(home, environment, environ, model,
                        review_tools(main_tools, specs, environ), settings.max_iterations,
                        settings.timeout)
    return LearningService(settings, reviewer, LearningLog(home.logs_dir / LOG_FILE),
                           ReviewLocks(home.path / "run" / "reviews"))
