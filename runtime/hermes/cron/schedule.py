"""Schedules as people write them, and when they come due.

- ``30m``, ``2h``, ``1d``: once, that long from now (stored as the time it comes to);
- ``every 2h``: repeating, the first run one interval from now;
- a five-field cron expression (``0 9 * * 1-5``), in the profile's time zone;
- an ISO time (``2030-01-31T09:00``, ``2030-01-31 09:00+02:00``): once; without an
  offset it is in the profile's time zone; a time already past is refused.

After downtime a repeating job runs once, then at its next slot after now: missed slots
are not made up one by one (``Schedule.after``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from hermes.cron.clock import zone_label
from hermes.errors import UserError

EXAMPLES = ('write 30m, 2h or 1d (once, from now), every 2h (repeating), a cron expression '
            'such as "0 9 * * 1-5", or a time such as 2030-01-31T09:00 (once)')
UNITS = {"m": 60, "h": 3600, "d": 86400}
DURATION = re.compile(r"(\d+)\s*(m|mins?|minutes?|h|hrs?|hours?|d|days?)", re.IGNORECASE)
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
ScheduleKind = Literal["once", "every", "cron"]


class ScheduleError(UserError):
    """A schedule that cannot be read, or a time already past."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule. ``text`` is what is stored: a once-schedule's absolute time."""

    text: str
    kind: ScheduleKind
    seconds: int = 0
    """``every``: the interval."""
    at: datetime | None = None
    """``once``: when."""

    @property
    def repeats(self) -> bool:
        return self.kind != "once"

    def first(self, now: datetime) -> datetime:
        """When a job with this schedule, created ``now``, first comes due."""
        if self.at is not None:
            return self.at
        if self.kind == "every":
            return now + timedelta(seconds=self.seconds)
        return cron_next(self.text, now)

    def after(self, due: datetime, now: datetime) -> datetime | None:
        """The next slot strictly after ``now`` of a run that came due at ``due`` (None:
        a once-schedule is done). Slots missed while nothing ran are skipped."""
        if self.kind == "once":
            return None
        if self.kind == "every":
            step = timedelta(seconds=self.seconds)
            return due + ((now - due) // step + 1) * step if due <= now else due + step
        return cron_next(self.text, now)

    def describe(self, zone: tzinfo) -> str:
        """For listings, times in ``zone`` (the profile's) with the zone named: ``once at
        2030-01-31 09:00 CET``, ``every 2h``, ``cron 0 9 * * * (Europe/Berlin)``."""
        if self.at is not None:
            return f"once at {self.at.astimezone(zone):%Y-%m-%d %H:%M %Z}"
        if self.kind == "every":
            return self.text
        return f"cron {self.text} ({zone_label(zone)})"


def parse_schedule(text: str, now: datetime, *, future_only: bool = True) -> Schedule:
    """``text`` as a ``Schedule``; ``now`` is aware, in the profile's zone (naive times are
    read in it). ``ScheduleError`` names the problem and shows every form."""
    written = " ".join(text.split())
    lowered = written.lower()
    if lowered.startswith("every "):
        return Schedule(lowered, "every", seconds=_duration(written, lowered[6:]))
    if ISO_DATE.match(written):
        return _once_at(written, now, future_only)
    if len(written.split()) >= 5:
        return _cron(written)
    if DURATION.fullmatch(written):
        at = now + timedelta(seconds=_duration(written, written))
        return Schedule(at.isoformat(timespec="seconds"), "once", at=at)
    raise ScheduleError(f"cannot read the schedule {text!r}: {EXAMPLES}")


def _duration(text: str, part: str) -> int:
    match = DURATION.fullmatch(part.strip())
    if match is None:
        raise ScheduleError(f"cannot read the interval of {text!r}: {EXAMPLES}")
    seconds = int(match[1]) * UNITS[match[2][0].lower()]
    if seconds < 60:
        raise ScheduleError(f"{text!r}: the shortest interval is 1m; {EXAMPLES}")
    return seconds


def _once_at(text: str, now: datetime, future_only: bool) -> Schedule:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ScheduleError(f"cannot read the time {text!r}: {EXAMPLES}") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=now.tzinfo)
    if future_only and at <= now:
        raise ScheduleError(f"{text!r} is in the past (it is {now:%Y-%m-%d %H:%M %Z} in the "
                            f"profile's time zone, cron.timezone); {EXAMPLES}")
    return Schedule(at.isoformat(timespec="seconds"), "once", at=at)


def _cron(text: str) -> Schedule:
    fields = len(text.split())
    if fields != 5:
        raise ScheduleError(f"{text!r} has {fields} fields; a cron expression has five "
                            f"(minute hour day month weekday); {EXAMPLES}")
    from croniter import croniter

    try:
        croniter(text)
    except (ValueError, KeyError) as exc:
        raise ScheduleError(f"bad cron expression {text!r} ({exc}); {EXAMPLES}") from None
    return Schedule(text, "cron")


def cron_next(expression: str, now: datetime) -> datetime:
    """The first time after ``now`` that ``expression`` names, in ``now``'s zone."""
    from croniter import croniter

    following: datetime = croniter(expression, now).get_next(datetime)
    return following
