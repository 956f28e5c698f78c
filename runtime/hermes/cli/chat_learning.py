"""The chat's side of the learning loop: "learned: ..." lines, and reviews at exit.

A review starts only once the turn that made it due has printed its answer
(``answering``), so it never slows that answer down. When a review that changed
something ends, one line goes to stderr (``learned: skill deploy-site created``).
While the interactive chat shows its prompt the line appears at once above it (the
prompt patches stdout and stderr); during a turn it waits until the turn's output is
done, so it never lands inside an answer.

At exit a review may still run. The warm server's child finishes it after the client
has its exit status (``CliState.background``): the user's command returns at once. A
CLI running in-process (``--no-daemon``) waits at most ``learning.exit_wait`` seconds
and says so; Ctrl-C, or the time running out, stops the review (what it saved stays).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hermes.learning.review import ReviewOutcome
from hermes.learning.service import LearningService

STOP_WAIT = 2.0
"""Seconds a stopped review gets to end (its model call returns at once when interrupted)."""


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")  # the current stderr: the prompt may have patched it
    sys.stderr.flush()


class LearnedNotices:
    """Prints what each background review of this chat's runtime learned."""

    def __init__(self, service: LearningService, say: Callable[[str], None] = _say):
        self._say = say
        self._held: list[str] | None = None
        self._lock = threading.Lock()
        self.close = service.subscribe(self._heard)

    def _heard(self, outcome: ReviewOutcome) -> None:
        summary = outcome.summary()
        if summary is None:
            return
        with self._lock:
            if self._held is not None:
                self._held.append(summary)
                return
        self._say(f"learned: {summary}")

    @contextmanager
    def held(self) -> Iterator[None]:
        """Keep lines back while a turn prints; show them when it is done."""
        with self._lock:
            self._held = []
        try:
            yield
        finally:
            with self._lock:
                held, self._held = self._held or [], None
            for summary in held:
                self._say(f"learned: {summary}")


@contextmanager
def answering(learning: LearningService, notices: LearnedNotices) -> Iterator[None]:
    """While a turn runs and prints: reviews wait to start, "learned:" lines to print."""
    learning.hold()
    try:
        with notices.held():
            yield
    finally:
        learning.release()


def finish_reviews(runtime: Any, background: list[Callable[[], None]] | None) -> bool:
    """Running reviews at the end of a chat command. True when the runtime's closing is
    left to ``background`` (the warm server's child, after the client is released)."""
    learning: LearningService = runtime.container.learning()
    if not learning.running():
        learning.release()
        return False
    settings = runtime.settings.learning
    if background is not None:
        def finish() -> None:  # the client has its answer now
            learning.release()
            try:
                learning.wait(settings.timeout)
            finally:
                runtime.close()

        background.append(finish)
        return True
    _wait_in_process(learning, settings.exit_wait)
    return False


def _wait_in_process(learning: LearningService, seconds: float) -> None:
    learning.release()
    _say(f"learning: waiting up to {seconds:g} s for the background review to finish "
         "(learning.exit_wait; Ctrl-C skips)")
    try:
        done = learning.wait(seconds)
    except KeyboardInterrupt:
        done = False
    if not done:
        learning.stop_all()
        learning.wait(STOP_WAIT)  # an interrupted review still reports what it saved
        _say("learning: the review was stopped before it finished; what it saved is kept")
