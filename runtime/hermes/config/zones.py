"""Time zones by IANA name (``cron.timezone``, checked when the config is composed) and
the machine's own zone."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hermes.errors import did_you_mean

LOCALTIME = "/etc/localtime"


class UnknownZone(ValueError):
    """A time zone name the time zone database does not know."""


def zone_named(name: str) -> tzinfo:
    """The IANA zone ``name``; ``UnknownZone`` with the closest names otherwise."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        from zoneinfo import available_timezones

        known = available_timezones()
        hint = did_you_mean(name, known) if known else " (no time zone database found: " \
            "install tzdata)"
        raise UnknownZone(f"unknown time zone {name!r}{hint}; write an IANA name such as "
                          "Europe/Berlin or UTC") from None


def local_zone(environ: Mapping[str, str]) -> tzinfo:
    """The machine's zone: ``TZ`` if it names one, else ``/etc/localtime`` (with its
    daylight-saving rules), else the current UTC offset."""
    name = environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return zone_named(name)
        except UnknownZone:
            pass
    try:
        with open(LOCALTIME, "rb") as file:
            return ZoneInfo.from_file(file, key="localtime")
    except (OSError, ValueError):
        offset = datetime.now().astimezone().tzinfo
        assert offset is not None
        return offset


def profile_zone(name: str | None, environ: Mapping[str, str]) -> tzinfo:
    """``cron.timezone``, or the machine's zone when it is not set."""
    return zone_named(name) if name else local_zone(environ)
