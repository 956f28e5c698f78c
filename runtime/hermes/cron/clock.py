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

    def show(self, when: datetime) -> str:
        """``when`` for people, in the profile's zone with the zone named:
        ``2030-01-31 09:00 IST`` (times stored with another offset are converted)."""
        return f"{when.astimezone(self.zone):%Y-%m-%d %H:%M %Z}"



def zone_label(zone: tzinfo) -> str:
    """The zone's IANA name (``Asia/Kolkata``), else its current abbreviation (the
    machine's ``/etc/localtime`` has no name)."""
    key = getattr(zone, "key", None)
    return key if isinstance(key, str) and key != "localtime" else f"{datetime.now(zone):%Z}"
