"""The typed ``learning`` and ``curator`` sections: the closed learning loop's settings.

``learning`` is the background review that runs after a turn when a nudge interval is
reached (``hermes.learning``); ``curator`` is the periodic upkeep of the home's skills
(stale marks and archiving, ``hermes.learning.curator``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.sections import NonBlank, Section
from hermes.errors import UserError

DURATION_HELP = ("expected a duration such as 7d, 2h, 90m, 2w or 1d12h (units s, m, h, d, w), "
                 "or a number of seconds")


def _seconds(value: Any) -> Any:
    """A duration: seconds as a number, or text such as ``7d``, ``2h``, ``90m``, ``1d12h``."""
    if isinstance(value, bool):
        raise PydanticCustomError("duration", DURATION_HELP)
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return value
    from hermes.sessions.durations import parse_duration

    try:
        return parse_duration(value).total_seconds()
    except UserError:
        raise PydanticCustomError("duration", DURATION_HELP) from None


def format_duration(seconds: float) -> str:
    """``604800`` as ``7d``, ``7200`` as ``2h``: the largest unit that divides it."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


Duration = Annotated[float, BeforeValidator(_seconds), Field(gt=0)]
"""Seconds; YAML may write ``7d``, ``2h``, ``90m``, ``1d12h`` or a number of seconds."""


class LearningConfig(Section):
    """The background review after a turn: does anything belong in memory, should a skill
    be created or improved? It runs on a snapshot of the conversation, off the critical
    path, with only the memory and skill tools."""

    enabled: bool = True
    """Run background reviews at all (``false``: never; nothing is counted either)."""
    memory_nudge_turns: int = Field(10, ge=0)
    """User turns since the last memory write (or memory review) after which a review
    asks whether anything belongs in memory; 0: never."""
    skill_nudge_iterations: int = Field(10, ge=0)
    """Tool iterations (model calls that used tools) since the last skill write (or skill
    review) after which a review asks whether a skill should be created or improved;
    0: never."""
    model: NonBlank | None = None
    """A cheaper model for the review, at the main provider; unset: the main model."""
    max_iterations: int = Field(8, gt=0)
    """The review's own budget: model calls per pass (memory, skills)."""
    timeout: Duration = 300.0
    """Seconds a whole review may take before it is interrupted (what it saved stays)."""
    exit_wait: float = Field(20.0, ge=0)
    """Seconds an in-process CLI (``--no-daemon``) waits at exit for a running review
    (it says so); the warm server and the gateway finish reviews on their own."""


class CuratorConfig(Section):
    """Upkeep of the home's own skills: long-unused ones are marked stale, then archived
    to ``skills/.archive/`` (never deleted). Pinned skills and skills named by cron jobs
    are exempt. Ticked by the gateway and the warm server; ``hermes curator run`` by hand."""

    enabled: bool = True
    """Let the gateway and the warm server run the curator when it is due."""
    interval: Duration = 7 * 86400.0
    """At most one automatic run per interval (``7d``)."""
    idle: Duration = 2 * 3600.0
    """An automatic run waits until the profile has been idle this long (``2h``): no
    turn in any session and no skill used."""
    stale_after: Duration = 30 * 86400.0
    """A skill unused this long (``30d``) is marked stale (its next use clears it)."""
    archive_after: Duration = 90 * 86400.0
    """A skill unused this long (``90d``) is moved to ``skills/.archive/``."""

    @model_validator(mode="after")
    def _archive_after_stale(self) -> CuratorConfig:
        if self.archive_after <= self.stale_after:
            raise ValueError(f"archive_after ({format_duration(self.archive_after)}) must be "
                             f"longer than stale_after ({format_duration(self.stale_after)}) "
                             "— raise archive_after")
        return self
