"""What every page shares: the templates (Jinja2, autoescaped), the nav, the profile
switcher, the anti-CSRF token, and ``open_page``, the dependency that serves a profile's
page only to a session that may see that profile."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse

from hermes import __version__
from hermes.dashboard.pages import SECTIONS, Section
from hermes.dashboard.tokens import Access
from hermes.home import DEFAULT_PROFILE, Home
from hermes.profiles.manager import ProfileManager

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


class Views:
    """The dashboard's templates and the root they show."""

    def __init__(self, root: Path, environ: Mapping[str, str]):
        self.manager = ProfileManager(root, {k: v for k, v in environ.items()
                                             if k != "HERMES_HOME"})
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
            undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.templates.filters["when"] = when
        self.templates.globals["static"] = lambda name: f"/static/{name}?v={__version__}"

    def profiles(self) -> list[str]:
        """Every profile of the root, ``default`` first."""
        return [DEFAULT_PROFILE, *self.manager.names()]

    def visible(self, access: Access) -> list[str]:
        return [name for name in self.profiles() if access.sees(name)]

    def render(self, name: str, /, code: int = 200, **values: Any) -> HTMLResponse:
        """``name`` rendered with ``values`` (a value may itself be called ``name``)."""
        return HTMLResponse(self.templates.get_template(name).render(**values),
                            status_code=code, headers={"cache-control": "no-store"})


@dataclass
class Page:
    """One request for a page of ``profile``, which its session may see."""

    request: Request
    views: Views
    access: Access
    profile: str
    home: Home

    def render(self, template: str, section: str, /, **values: Any) -> HTMLResponse:
        """``template`` inside ``base.html``'s frame: nav (``section`` marked), switcher."""
        session = getattr(self.request.state, "session", None)
        return self.views.render(
            template, sections=SECTIONS, section=section, profile=self.profile,
            profiles=self.views.visible(self.access), csrf=session.csrf if session else "",
            **values)


def open_page(request: Request, profile: str) -> Page:
    """The ``Page`` of ``/p/{profile}/...``: 403 for a session of another profile (whether
    or not this one exists), 404 for no such profile."""
    views: Views = request.app.state.views
    access: Access = request.state.access
    if not access.sees(profile):
        raise HTTPException(403, "This page's token opens another profile only; open the "
                                 "root token's URL to see every profile.")
    if profile not in views.profiles():
        raise HTTPException(404, f"No profile named {profile!r}.")
    return Page(request, views, access, profile, views.manager.home(profile))


def section_named(name: str) -> Section | None:
    """The built section ``name``, if there is one."""
    return next((s for s in SECTIONS if s.name == name and s.module), None)


def when(timestamp: float | None) -> str:
    """A time as the pages show it: ``2026-11-27 09:40`` (local), or ``never``."""
    if timestamp is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
