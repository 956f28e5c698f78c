"""The Profiles page: each profile the session may see, with its model, platforms,
session count and last activity; switching the page's profile is a link to another
profile's page (``open_page`` refuses one the session may not see)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse

from hermes.dashboard.page import Page, open_page
from hermes.errors import ConfigError
from hermes.home import Home
from hermes.profiles.manager import ProfileManager

router = APIRouter()


@dataclass(frozen=True)
class ProfileSummary:
    """One row of the Profiles page."""

    name: str
    description: str
    active: bool
    """The root's active profile (``hermes profile switch``)."""
    provider: str
    model: str
    platforms: list[str]
    """The gateway platforms the profile enables, as ``name (kind)``."""
    problem: str | None
    """Why the profile's config does not compose, if it does not."""
    sessions: int | None
    """Sessions in its ``state.db`` (None: unreadable)."""
    last_activity: float | None


@router.get("/p/{profile}/profiles", response_class=HTMLResponse)
def profiles_page(page: Annotated[Page, Depends(open_page)]) -> HTMLResponse:
    manager = page.views.manager
    summaries = [summarize(manager, name) for name in page.views.visible(page.access)]
    return page.render("profiles/index.html", "profiles", summaries=summaries)


def summarize(manager: ProfileManager, name: str) -> ProfileSummary:
    info = manager.info(name)
    platforms, problem = _platforms(info.name, manager)
    sessions, last = session_activity(manager.home(name))
    return ProfileSummary(name, info.description, info.active, info.provider, info.model,
                          platforms, problem, sessions, last)


def _platforms(name: str, manager: ProfileManager) -> tuple[list[str], str | None]:
    """The enabled platforms of the profile's composed config, or the composition's error."""
    from hermes.config import compose_config

    try:
        config = compose_config(manager.home(name), manager.environ).config
    except ConfigError as exc:
        return [], str(exc)
    return [f"{key} ({platform.kind})" for key, platform in config.platforms.enabled.items()
            ], None


def session_activity(home: Home) -> tuple[int | None, float | None]:
    """How many sessions ``home``'s ``state.db`` holds and when one was last updated,
    read-only (a profile without a database gets none made): ``(0, None)`` without one,
    ``(None, None)`` if it cannot be read."""
    path = home.sessions_db
    if not path.is_file():
        return 0, None
    try:
        with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True,
                                     timeout=2)) as conn:
            count, last = conn.execute(
                "SELECT count(*), max(coalesce(updated_at, started_at)) FROM sessions"
            ).fetchone()
    except sqlite3.Error:
        return None, None
    return int(count), last
