"""``logs/learning.jsonl``: one JSON line per background review and per curator run.

A review's line names its session, passes, model, iterations, duration and what it
changed (``by: review``: the provenance of those writes); a curator run's line lists
the skills it marked stale and archived. Only names, files and actions are logged,
never the text saved, so a secret the model wrote somewhere never reaches the log.
The file is 0600, appended to by every process of the home.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.fsutil import private_dir

if TYPE_CHECKING:  # the curator's CLI logs too, and must not load the agent loop
    from hermes.learning.review import ReviewOutcome

LOG_FILE = "learning.jsonl"
log = logging.getLogger(__name__)


class LearningLog:
    """Appends to one home's ``logs/learning.jsonl``."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time):
        self.path = path
        self.clock = clock

    def review(self, outcome: ReviewOutcome) -> None:
        changes = [{**asdict(change), "by": "review"} for change in outcome.changes]
        self.write({"event": "review", "session": outcome.session_id,
                    "passes": list(outcome.passes), "model": outcome.model,
                    "iterations": outcome.iterations, "seconds": round(outcome.seconds, 3),
                    "changes": changes, "interrupted": outcome.interrupted,
                    "error": outcome.error})

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` with the time; a log that cannot be written is only warned
        about (learning must never break a session)."""
        line = json.dumps({"time": round(self.clock(), 3), **record}, ensure_ascii=False)
        try:
            private_dir(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        except OSError as exc:
            log.warning("cannot write %s: %s", self.path, exc)

    def records(self) -> list[dict[str, Any]]:
        """Every line, oldest first (unreadable ones skipped)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        found = []
        for line in lines:
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found
