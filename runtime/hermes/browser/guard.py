"""The address rules for the browser: the URL a navigation names is checked before the
browser is asked (one clear line), and every request is checked by the guard proxy
(``hermes.web.proxy``) or, for a browser we did not start, by routing it here."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from hermes.errors import HermesError, ToolError
from hermes.tools.context import ToolContext

PASSING_SCHEMES = ("data", "blob", "about")
"""Sub-requests that reach no network (inline data, the page's own objects)."""


async def check_address(policy: Any, url: str) -> None:
    """Refuse (``ToolError``, one line) an http(s) URL whose host the policy refuses."""
    try:
        parts = policy.check_url(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        await asyncio.to_thread(policy.resolve, parts.hostname or "", port)
    except HermesError as exc:
        raise ToolError(str(exc)) from exc


def check_file_url(url: str, ctx: ToolContext) -> str:
    """The local path of a ``file://`` URL the session's sandbox may read, else
    ``ToolError``; the browser runs here, so only this machine's files qualify."""
    from hermes.tools.targets import file_target

    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ToolError(f"{url}: a file URL names a file on this machine (file:///path)")
    target = file_target(unquote(parts.path) or "/", ctx)
    if Path(target.path).parts[1:2] in (("proc",), ("sys",), ("dev",)):
        raise ToolError(f"{url}: the browser opens no process or device files (/proc, /sys, "
                        "/dev): they are this runtime's and the browser's own")
    if not target.files.is_local:
        raise ToolError(f"{url}: the files of the {ctx.environment.kind} environment are "
                        "not on the browser's machine; serve them over http instead")
    return str(Path(target.path))


async def check_frames(tab: Any) -> None:
    """Refuse (``ToolError``) a page any of whose frames shows a ``file://`` URL the
    sandbox does not read: a file page the model may open can frame or link to any
    other file (the Hermes root, ``/proc``), and Chromium lets it. The window is blanked
    first, so that nothing of it is read afterwards."""
    page = tab.page
    if page is None or page.is_closed() or tab.ctx is None:
        return
    for frame in page.frames:
        if urlsplit(frame.url).scheme.lower() != "file":
            continue
        try:
            check_file_url(frame.url, tab.ctx)
        except ToolError as exc:
            tab.snapshot = None
            with contextlib.suppress(Exception):
                await page.goto("about:blank")
            reason = str(exc).split(":", 1)[-1].strip().split(";", 1)[0]
            raise ToolError(f"{frame.url}: the page opened a file the sandbox does not read "
                            f"({reason}); the window shows about:blank now") from None


async def check_navigation(policy: Any, url: str, ctx: ToolContext) -> str:
    """``url`` as the browser should open it, or ``ToolError`` naming why not."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        await check_address(policy, url)
        return url
    if scheme == "file":
        return Path(check_file_url(url, ctx)).as_uri()
    if scheme == "about" and url == "about:blank":
        return url
    shown = scheme or url[:40]
    raise ToolError(f"{shown}: the browser opens http(s) URLs and files the sandbox may read "
                    "(file:///path) only")


class RouteGuard:
    """Checks each request of a context by ``policy`` (for browsers that do not go
    through our proxy); ``refusals`` keeps what it refused, for the next result."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.refusals: list[str] = []

    async def install(self, context: Any) -> None:
        await context.route("**/*", self.handle)

    async def handle(self, route: Any) -> None:
        url = route.request.url
        scheme = urlsplit(url).scheme.lower()
        if scheme in PASSING_SCHEMES:
            await route.continue_()
            return
        try:
            if scheme not in ("http", "https", "ws", "wss"):
                raise ToolError(f"{scheme}: not a web address")
            await check_address(self.policy, url.replace("ws", "http", 1)
                                if scheme.startswith("ws") else url)
        except ToolError as exc:
            self.refusals.append(str(exc))
            await route.abort("blockedbyclient")
            return
        await route.continue_()

    def take_refusals(self) -> list[str]:
        taken, self.refusals = self.refusals, []
        return taken
