"""Time for scheduled jobs: a clock in the profile's zone (``hermes.config.zones``) that
tests can move."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo


@dataclass(frozen=True)
class Clock:
    """Now, in the profile's zone; ``time`` is replaced by tests (a fake clock)."""

    zone: tzinfo
    time: Callable[[], float] = field(default=time.time)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time(), self.zone)
