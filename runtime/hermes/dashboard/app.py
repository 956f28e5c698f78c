"""The dashboard's FastAPI app: the pages of ``pages.SECTIONS`` behind ``auth.Guard``.

Imported only when the dashboard starts (``hermes dashboard``): composing config and
``hermes --help`` never load FastAPI or Jinja2.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from hermes.config.dashboard_schema import DashboardConfig
from hermes.dashboard.auth import Guard, Sessions
from hermes.dashboard.notices import Notices
from hermes.dashboard.page import STATIC, Views, section_named
from hermes.dashboard.pages import built, first_page
from hermes.dashboard.tokens import Tokens, cookie_tag
from hermes.http_names import HostRule


def create_app(root: Path, settings: DashboardConfig, *, environ: Mapping[str, str],
               start_profile: str = "default") -> FastAPI:
    """The dashboard of the profiles under ``root``, answering to ``settings.host`` (and
    ``settings.allowed_hosts``); ``/`` opens ``start_profile``'s page."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.views = Views(root, environ)
    app.state.start_profile = start_profile
    app.state.sessions = Sessions()
    app.state.notices = Notices()
    for section in built():
        app.include_router(importlib.import_module(
            f"hermes.dashboard.pages.{section.module}").router)
    _add_shared_routes(app)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(HTTPException, _error_page)  # type: ignore[arg-type]
    hosts = HostRule.for_address(settings.host)
    hosts.allow(settings.allowed_hosts)
    tokens = Tokens(root)
    app.add_middleware(Guard, hosts=hosts, tokens=tokens,  # type: ignore[arg-type]
                       sessions=app.state.sessions, profiles=app.state.views.profiles,
                       cookie=cookie_name(settings, tokens),
                       label_hosts=settings.cookie_host == "label")
    return app


def cookie_name(settings: DashboardConfig, tokens: Tokens) -> str:
    """The session cookie's name: ``hermes_dashboard_<port>``; set for ``127.0.0.1``
    (``cookie_host: loopback``) it carries a tag of the root's token too, so two roots'
    dashboards that take the same port in turn keep their cookies apart."""
    if settings.cookie_host == "loopback":
        return f"hermes_dashboard_{settings.port}_{cookie_tag(tokens.root_token())}"
    return f"hermes_dashboard_{settings.port}"


def _add_shared_routes(app: FastAPI) -> None:
    app.get("/")(_home)
    app.get("/switch")(_switch)
    app.post("/logout")(_log_out)


def _home(request: Request) -> RedirectResponse:
    """The session's profile (the start profile for the root token), first page."""
    profile = request.state.access.profile or request.app.state.start_profile
    return RedirectResponse(f"/p/{profile}/{first_page().name}", status_code=303)


def _switch(request: Request, to: str, section: str = "") -> RedirectResponse:
    """The profile switcher's form: the same section of profile ``to``."""
    target = section_named(section) or first_page()
    if not request.state.access.sees(to):
        raise HTTPException(403, "This session may not open that profile.")
    return RedirectResponse(f"/p/{to}/{target.name}", status_code=303)


def _log_out(request: Request) -> HTMLResponse:
    session = request.state.session
    if session is not None:
        request.app.state.sessions.close(session.id)
    return request.app.state.views.render("logged_out.html")


async def _error_page(request: Request, exc: HTTPException) -> HTMLResponse:
    return request.app.state.views.render("error.html", exc.status_code,
                                          status=exc.status_code, detail=exc.detail)
