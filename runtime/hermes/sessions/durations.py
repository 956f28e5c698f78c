"""Durations such as ``30d`` or ``1d12h``, as accepted by ``hermes sessions prune``."""

from __future__ import annotations

import re
from datetime import timedelta

from hermes.sessions.errors import InvalidDuration

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PART = re.compile(r"(\d+)([smhdw])")
_WHOLE = re.compile(r"(?:\d+[smhdw])+")


def parse_duration(text: str) -> timedelta:
    """Parse ``<number><unit>`` parts (s, m, h, d, w); raise ``InvalidDuration`` otherwise."""
    compact = text.strip().lower()
    if not _WHOLE.fullmatch(compact):
        raise InvalidDuration(text)
    seconds = sum(int(n) * UNITS[unit] for n, unit in _PART.findall(compact))
    if seconds == 0:
        raise InvalidDuration(text, "must be longer than zero")
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        raise InvalidDuration(text) from None
