"""The Gateway page: whether a gateway serves the profile and how each platform stands
(serving, reconnecting with the reason, failed), the turns running — read from what the
gateway writes (``gateway.pid``, ``gateway.json``, as ``hermes gateway status``) — the
pairing requests and paired users, approved and revoked through ``PairingStore`` as
``hermes pairing`` does, and the recent errors and warnings of ``logs/gateway.log``."""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from hermes.dashboard.notices import done, leave
from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError
from hermes.gateway.messaging.pairing import CODE_TTL, PairingStore, known_platform
from hermes.gateway.pidfile import read_status, running_pid
from hermes.hints import for_profile

router = APIRouter()
PageOf = Annotated[Page, Depends(open_page)]
LOG_TAIL_BYTES = 256 * 1024
ERRORS_SHOWN = 20
PROBLEM_LEVELS = ("error", "warning", "critical")


@dataclass(frozen=True)
class PlatformRow:
    name: str
    state: str
    detail: str
    retry_in: int | None
    """While reconnecting: seconds to the next attempt."""


@dataclass(frozen=True)
class GatewayView:
    """``gateway.json`` of a running gateway (None fields: not running)."""

    pid: int | None
    state: str
    started_at: float | None
    active_turns: int
    sessions: int
    platforms: list[PlatformRow]


@dataclass(frozen=True)
class LogLine:
    time: str
    level: str
    event: str
    detail: str


@router.get("/p/{profile}/gateway", response_class=HTMLResponse)
def gateway_page(page: PageOf) -> HTMLResponse:
    return _render(page)


def _render(page: Page, error: str | None = None, code: int = 200) -> HTMLResponse:
    store = PairingStore(page.home.pairing_dir)
    now = time.time()
    return page.render(
        "gateway/index.html", "gateway", gateway=_gateway(page), pending=store.pending(),
        paired=store.paired(), locked=[p for p in store.platforms()
                                       if store.locked_until(p) > now],
        problems=_problems(page.home.logs_dir / "gateway.log"), now=now, ttl=CODE_TTL,
        error=error, done=done(page.request),
        base=f"/p/{quote(page.profile)}/gateway", code=code)


def _gateway(page: Page) -> GatewayView:
    pid = running_pid(page.home)
    info = read_status(page.home) if pid else None
    if pid is None or info is None:
        return GatewayView(None, "not running", None, 0, 0, [])
    now = time.time()
    platforms = [PlatformRow(name, str(p.get("state", "?")), str(p.get("detail") or ""),
                             _retry_in(p.get("retry_at"), now))
                 for name, p in sorted(dict(info.get("platforms") or {}).items())]
    started = info.get("started_at")
    return GatewayView(pid, str(info.get("state", "running")),
                       float(started) if isinstance(started, int | float) else None,
                       int(info.get("active_turns") or 0), int(info.get("sessions") or 0),
                       platforms)


def _retry_in(retry_at: Any, now: float) -> int | None:
    return max(int(retry_at - now), 0) if isinstance(retry_at, int | float) else None


def _problems(log: Path) -> list[LogLine]:
    """The last errors and warnings of the gateway's log (its JSON lines), newest first."""
    try:
        with log.open("rb") as stream:
            stream.seek(max(stream.seek(0, 2) - LOG_TAIL_BYTES, 0))
            lines = stream.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found: deque[LogLine] = deque(maxlen=ERRORS_SHOWN)
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("level") in PROBLEM_LEVELS:
            found.append(_log_line(entry))
    return list(reversed(found))


def _log_line(entry: dict[str, Any]) -> LogLine:
    rest = {k: v for k, v in entry.items() if k not in ("time", "level", "event", "traceback")}
    detail = ", ".join(f"{key}={value}" for key, value in rest.items())
    return LogLine(str(entry.get("time", "")), str(entry["level"]), str(entry.get("event", "")),
                   detail)


@router.post("/p/{profile}/gateway/approve", response_class=HTMLResponse)
async def approve(page: PageOf) -> Response:
    """``hermes pairing approve PLATFORM CODE``."""
    form = await page.request.form()
    platform, code = str(form.get("platform", "")).strip(), str(form.get("code", ""))
    store = PairingStore(page.home.pairing_dir)
    try:
        paired = store.approve(known_platform(store, _enabled(page), platform), code)
    except UserError as exc:
        return _render(page, _said(page, exc), 400)
    name = f" ({paired.user_name})" if paired.user_name else ""
    return _back(page, f"paired {platform} user {paired.user_id}{name}: they can talk to "
                       "the agent now")


@router.post("/p/{profile}/gateway/revoke", response_class=HTMLResponse)
async def revoke(page: PageOf) -> Response:
    """``hermes pairing revoke PLATFORM USER_ID``."""
    form = await page.request.form()
    platform, user = str(form.get("platform", "")), str(form.get("user_id", ""))
    try:
        revoked = PairingStore(page.home.pairing_dir).revoke(platform, user)
    except UserError as exc:
        return _render(page, _said(page, exc), 400)
    return _back(page, f"revoked {platform} user {revoked.user_id}; allowed_users in config "
                       "still apply")


def _enabled(page: Page) -> list[str]:
    from hermes.config import compose_config

    config = compose_config(page.home, page.views.manager.environ).config
    return list(config.platforms.enabled)


def _back(page: Page, said: str) -> RedirectResponse:
    return RedirectResponse(f"/p/{quote(page.profile)}/gateway?done={leave(page.request, said)}",
                            status_code=303)


def _said(page: Page, exc: UserError) -> str:
    """A refusal as the CLI prints it for this profile (its hints carry ``-p NAME``)."""
    return for_profile(str(exc), page.profile)
