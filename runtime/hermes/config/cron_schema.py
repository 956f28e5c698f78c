"""The ``cron`` section: scheduled jobs of a profile (``hermes.cron``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from hermes.config.sections import Section


def _time_zone(name: str | None) -> str | None:
    """An IANA name the time zone database knows (checked at composition)."""
    if name is None:
        return None
    from hermes.config.zones import UnknownZone, zone_named

    try:
        zone_named(name)
    except UnknownZone as exc:
        raise PydanticCustomError("unknown_name", str(exc)) from None
    return name


def _chat(value: str | None) -> str | None:
    """``chat_id`` or ``chat_id:thread``, as a delivery target writes them."""
    if value is None:
        return None
    from hermes.chats import TargetError, parse_target

    try:
        parse_target(f"platform:{value}")
    except TargetError:
        raise PydanticCustomError("unknown_name", "{value} is not a chat: write CHAT_ID or "
                                  "CHAT_ID:THREAD", {"value": repr(value)}) from None
    return value


def _number_as_text(value: object) -> object:
    """Chat ids are often numbers, which YAML reads as integers."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


HomeChannel = Annotated[str | None, BeforeValidator(_number_as_text), AfterValidator(_chat)]
"""A platform's ``home_channel``: where jobs that name only the platform deliver."""


class CronConfig(Section):
    """Scheduled jobs (``cron/jobs.json``): the gateway runs the due ones every minute;
    without a gateway, ``hermes cron tick`` does (a system timer)."""

    enabled: bool = True
    """Whether the gateway runs this profile's due jobs (``hermes cron tick`` and
    ``hermes cron run`` work either way)."""
    timezone: Annotated[str | None, AfterValidator(_time_zone)] = None
    """IANA time zone (``Europe/Berlin``) of cron expressions and of times written without
    an offset; null: the machine's (``TZ``, else ``/etc/localtime``)."""
    keep_outputs: int = Field(50, ge=1)
    """Outputs kept per job under ``cron/output/<job>/``; older ones are removed."""
