"""Every schedule form people write, when each comes due, and every refusal (one line
that shows an example of each form)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from hermes.config.zones import UnknownZone, profile_zone, zone_named
from hermes.cron.schedule import EXAMPLES, ScheduleError, parse_schedule

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2030, 3, 30, 22, 10, tzinfo=BERLIN)  # the night before summer time starts


@pytest.mark.parametrize(("text", "delay"), [
    ("30m", timedelta(minutes=30)), ("2h", timedelta(hours=2)), ("1d", timedelta(days=1)),
    ("45 minutes", timedelta(minutes=45)), ("3 hours", timedelta(hours=3)),
])
def test_a_duration_runs_once_that_long_from_now(text: str, delay: timedelta) -> None:
    schedule = parse_schedule(text, NOW)
    assert schedule.kind == "once" and not schedule.repeats
    assert schedule.first(NOW) == NOW + delay
    assert schedule.text == (NOW + delay).isoformat()  # stored as the time it comes to
    assert schedule.after(NOW + delay, NOW + delay) is None


def test_every_repeats_from_now_and_skips_missed_slots() -> None:
    schedule = parse_schedule("every 2h", NOW)
    assert (schedule.kind, schedule.seconds, schedule.describe(BERLIN)) == ("every", 7200,
                                                                 "every 2h")
    first = schedule.first(NOW)
    assert first == NOW + timedelta(hours=2)
    assert schedule.after(first, first) == first + timedelta(hours=2)
    # Down for 9 hours: the next slot after now, on the same 2-hour grid; one run, not 4.
    late = first + timedelta(hours=9)
    assert schedule.after(first, late) == first + timedelta(hours=10)


def test_a_cron_expression_follows_the_profile_time_zone() -> None:
    schedule = parse_schedule("30 2 * * *", NOW)
    assert schedule.kind == "cron"
    assert schedule.describe(BERLIN) == "cron 30 2 * * * (Europe/Berlin)"
    first = schedule.first(NOW)
    # 02:30 does not exist in Berlin on 2030-03-31 (clocks jump 02:00 -> 03:00).
    assert first.tzinfo is BERLIN and first.date().isoformat() == "2030-03-31"
    second = schedule.after(first, first)
    assert second is not None and (second.hour, second.minute) == (2, 30)
    assert second.utcoffset() == timedelta(hours=2)  # summer time by then
    weekdays = parse_schedule("0 9 * * 1-5", NOW)
    assert weekdays.first(NOW) == datetime(2030, 4, 1, 9, 0, tzinfo=BERLIN)  # a Monday


def test_missed_cron_slots_run_once() -> None:
    schedule = parse_schedule("0 * * * *", NOW)
    due = schedule.first(NOW)
    down_until = due + timedelta(hours=5, minutes=20)
    assert schedule.after(due, down_until) == due + timedelta(hours=6)


@pytest.mark.parametrize(("text", "expected"), [
    ("2030-04-02T09:00", datetime(2030, 4, 2, 9, 0, tzinfo=BERLIN)),  # naive: profile zone
    ("2030-04-02 09:00", datetime(2030, 4, 2, 9, 0, tzinfo=BERLIN)),
    ("2030-04-02", datetime(2030, 4, 2, 0, 0, tzinfo=BERLIN)),
    ("2030-04-02T09:00Z", datetime(2030, 4, 2, 11, 0, tzinfo=BERLIN)),
    ("2030-04-02T09:00-05:00", datetime(2030, 4, 2, 16, 0, tzinfo=BERLIN)),
])
def test_a_time_runs_once_then(text: str, expected: datetime) -> None:
    schedule = parse_schedule(text, NOW)
    assert schedule.kind == "once" and schedule.first(NOW) == expected
    assert schedule.describe(BERLIN) == f"once at {expected:%Y-%m-%d %H:%M} CEST"


REFUSED = {
    "nonsense": ("tomorrow-ish", "cannot read the schedule 'tomorrow-ish'"),
    "empty": ("", "cannot read the schedule ''"),
    "seconds": ("every 30s", "cannot read the interval of 'every 30s'"),
    "zero": ("every 0m", "'every 0m': the shortest interval is 1m"),
    "zero once": ("0m", "'0m': the shortest interval is 1m"),
    "past": ("2020-01-01T09:00", "'2020-01-01T09:00' is in the past (it is 2030-03-30 22:10"),
    "past today": ("2030-03-30T22:00", "is in the past"),
    "bad date": ("2030-02-30T09:00", "cannot read the time '2030-02-30T09:00'"),
    "out of range": ("61 * * * *", "bad cron expression '61 * * * *'"),
    "six fields": ("0 0 9 * * 1", "has 6 fields; a cron expression has five"),
    "bad name": ("0 9 * * funday", "bad cron expression"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refusals_say_what_is_wrong_and_show_every_form(case: str) -> None:
    text, fragment = REFUSED[case]
    with pytest.raises(ScheduleError) as caught:
        parse_schedule(text, NOW)
    message = str(caught.value)
    assert fragment in message and "\n" not in message
    assert message.endswith(EXAMPLES)
    for example in ("30m", "every 2h", '"0 9 * * 1-5"', "2030-01-31T09:00"):
        assert example in message


def test_a_stored_once_time_reads_back_when_past() -> None:
    stored = parse_schedule("2h", NOW).text
    later = NOW + timedelta(days=1)
    assert parse_schedule(stored, later, future_only=False).at == NOW + timedelta(hours=2)


def test_time_zones() -> None:
    assert profile_zone("Asia/Kolkata", {}) == ZoneInfo("Asia/Kolkata")
    assert profile_zone(None, {"TZ": "America/Chicago"}) == ZoneInfo("America/Chicago")
    with pytest.raises(UnknownZone) as caught:
        zone_named("Europe/Berln")
    assert str(caught.value) == ("unknown time zone 'Europe/Berln' (did you mean "
                                 '"Europe/Berlin"?); write an IANA name such as Europe/Berlin '
                                 "or UTC")
