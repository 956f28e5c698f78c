"""What the Skills page shows besides the skills: the curator's state (``hermes curator
status``) and the learning log (``logs/learning.jsonl``: what each background review and
curator run changed, and when)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes.errors import UserError

if TYPE_CHECKING:
    from hermes.dashboard.page import Page
    from hermes.learning.curator import CuratorStatus
    from hermes.skills.store import SkillsStore


@dataclass(frozen=True)
class CuratorState:
    """The curator's status, or why it cannot be read (a config that does not compose)."""

    status: CuratorStatus | None
    problem: str | None = None


@dataclass(frozen=True)
class LogLine:
    """One line of the learning log, as the page shows it."""

    time: float | None
    event: str
    """``review`` or ``curator``."""
    session: str | None
    changes: list[str]
    """``skill X created``, ``memory updated``, ``marked stale: X``, ``archived: X``."""
    error: str | None


def curator_state(page: Page, store: SkillsStore) -> CuratorState:
    """``hermes curator status`` of the page's profile (its composed ``curator.*``)."""
    from hermes.config import compose_config
    from hermes.learning.curator import home_curator

    try:
        config = compose_config(page.home, page.views.manager.environ).config
        return CuratorState(home_curator(page.home, store, config.curator).status())
    except UserError as exc:
        return CuratorState(None, str(exc))


def learning_log(page: Page, limit: int) -> list[LogLine]:
    """The last ``limit`` lines of the profile's learning log, newest first."""
    from hermes.learning.log import LOG_FILE, LearningLog

    records = LearningLog(page.home.logs_dir / LOG_FILE).records()[-limit:]
    return [_line(record) for record in reversed(records)]


def _line(record: dict[str, Any]) -> LogLine:
    event = str(record.get("event", "?"))
    if event == "curator":
        changes = [f"marked stale: {name}" for name in record.get("stale") or []]
        changes += [f"archived: {name}" for name in record.get("archived") or []]
    else:
        changes = [_change(change) for change in record.get("changes") or []
                   if isinstance(change, dict)]
    when = record.get("time")
    return LogLine(when if isinstance(when, int | float) else None, event,
                   record.get("session"), changes, record.get("error"))


def _change(change: dict[str, Any]) -> str:
    if change.get("kind") == "memory":
        return f"memory ({change.get('target', '?')}): {change.get('action', '?')}"
    return f"skill {change.get('target', '?')}: {change.get('action', '?')}"
