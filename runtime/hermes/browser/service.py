"""``BrowserService``: the browser of one runtime and a context per session.

Nothing starts until the first browser tool call: then Playwright, the address guard
proxy and the browser (or a connection to one) on the browser thread. Each session gets
a context of its own (no cookies or storage shared with any other session), closed when
the session ends (``on_session_end``) or after ``browser.idle_timeout`` unused; the
browser closes when no context is left for as long, and with the runtime.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from hermes.browser.backends import (
    Backend,
    CdpBackend,
    LocalBackend,
    ProviderBackend,
    find_chromium,
)
from hermes.browser.guard import RouteGuard
from hermes.browser.loop import BrowserLoop
from hermes.browser.tab import Tab
from hermes.config.browser_schema import BrowserConfig
from hermes.errors import ToolError
from hermes.home import Home
from hermes.tools.context import ToolContext

log = logging.getLogger(__name__)
T = TypeVar("T")
SLACK = 15.0
"""Seconds a tool call may take beyond the navigation timeout before it is given up."""
RECHECK_MISSING = 30.0
"""Seconds before a browser that was not found is looked for again."""


class BrowserService:
    """See the module docstring. Thread-safe: calls come from any thread and run on the
    browser thread."""

    def __init__(self, home: Home, settings: BrowserConfig, web: Any = None,
                 providers: Callable[[], Mapping[str, Any]] = dict,
                 environ: Mapping[str, str] | None = None) -> None:
        self.home = home
        self.environ = dict(environ) if environ is not None else None
        """The runtime's environment, Chromium's too (None: this process's)."""
        self.settings = settings
        self._web = web
        self._providers = providers
        self._loop = BrowserLoop()
        self._playwright: Any = None
        self._backend: Backend | None = None
        self._guard: Any = None
        self._starting: asyncio.Lock | None = None
        self._tabs: dict[str, Tab] = {}
        self._screenshots: dict[str, bytes] = {}
        self._active = time.monotonic()
        self._opened = 0
        self._chromium: tuple[tuple[str | None, str | None], str | None, float] | None = None
        """The last browser look-up: (executable setting, PATH), what it found, when."""

    # -- what the tools and the runtime call -------------------------------------------

    def unavailable(self) -> str | None:
        """Why the browser tools cannot work here (hidden then), or None."""
        backend = self.settings.backend
        if backend == "local":
            if self._find_chromium() is None:
                wanted = self.settings.executable or "chromium"
                return (f"no browser found ({wanted}): install chromium (apt-get install "
                        "chromium) or set browser.executable")
            return None
        if backend == "cdp":
            return None
        provider = self._provider()
        if provider is None:
            return f"browser.backend: no plugin registered the browser provider {backend!r}"
        with contextlib.suppress(Exception):
            if not provider.is_available():
                return f"browser provider {backend!r} is not configured"
        return None

    def _find_chromium(self) -> str | None:
        """``find_chromium``, asked for each browser tool before every model call: a
        browser found is kept while it is still there and PATH is the same (searching
        PATH for four names each time was a quarter of the agent loop's own time); none
        found is looked for again after ``RECHECK_MISSING`` seconds."""
        key = (self.settings.executable, os.environ.get("PATH"))
        seen = self._chromium
        if seen is not None and seen[0] == key:
            found, when = seen[1], seen[2]
            if found is not None and os.access(found, os.X_OK):
                return found
            if found is None and time.monotonic() - when < RECHECK_MISSING:
                return None
        found = find_chromium(self.settings.executable)
        self._chromium = (key, found, time.monotonic())
        return found

    def run(self, ctx: ToolContext, action: Callable[[Tab], Awaitable[T]]) -> T:
        """``action`` on the session's tab (made when missing), on the browser thread."""
        timeout = self.settings.navigation_timeout * 2 + SLACK
        try:
            return self._loop.run(self._with_tab(ctx, action), timeout)
        except TimeoutError:
            self._close_stuck(ctx.session_id)
            raise ToolError(f"the browser did not answer within {timeout:g} s; the window "
                            "was closed (the next browser_navigate opens a new one)") from None

    def _close_stuck(self, session_id: str) -> None:
        """The session's window after a call outlived its deadline (a page busy in a
        step with no timeout of its own, e.g. reading it after it loaded): closed, so
        the next call gets a new one instead of waiting on it again."""
        tab = self._tabs.get(session_id)
        if tab is not None and self._loop.running:
            with contextlib.suppress(Exception):
                self._loop.run(tab.close_stuck(), SLACK)

    def policy(self) -> Any:
        """The address rules of ``web.allow_private`` (``AddressPolicy``)."""
        from hermes.web.addresses import AddressPolicy

        return AddressPolicy.from_config(self._web)

    def last_screenshot(self, session_id: str) -> bytes | None:
        """The PNG of the session's latest ``browser_screenshot``, if any."""
        return self._screenshots.get(session_id)

    def keep_screenshot(self, session_id: str, png: bytes) -> None:
        self._screenshots[session_id] = png

    def take_refusals(self, tab: Tab) -> list[str]:
        """Requests the address guard refused since the last call."""
        if tab.route_guard is not None:
            return tab.route_guard.take_refusals()
        if self._guard is None:
            return []
        return [str(refusal) for refusal in self._guard.take_refusals(tab.client)]

    def end_session(self, session_id: str, **_: Any) -> None:
        """Close the session's context (the ``on_session_end`` hook)."""
        self._screenshots.pop(session_id, None)
        if session_id in self._tabs and self._loop.running:
            with contextlib.suppress(Exception):
                self._loop.run(self._close_tab(session_id), SLACK)

    def subscribe(self, bus: Any) -> Any:
        """Close each session's context when it ends; returns ``bus``."""
        bus.subscribe("on_session_end", self.end_session, "browser", inline=True)
        return bus

    def close(self) -> None:
        """Close every context and the browser, stop the browser thread (idempotent)."""
        if self._loop.running:
            with contextlib.suppress(Exception):
                self._loop.run(self._shutdown(), SLACK * 2)
        self._loop.stop()
        self._close_guard()

    @property
    def started(self) -> bool:
        """Whether a browser is running (or connected) now."""
        return self._backend is not None

    # -- on the browser thread ---------------------------------------------------------

    async def _with_tab(self, ctx: ToolContext, action: Callable[[Tab], Awaitable[T]]) -> T:
        tab = self._tabs.get(ctx.session_id)
        if tab is None or not self._backend_alive():
            tab = await self._open_tab(ctx.session_id)
        tab.ctx, tab.last_used = ctx, time.monotonic()
        try:
            return await action(tab)
        finally:
            tab.last_used = self._active = time.monotonic()
            self._schedule_reap()

    def _backend_alive(self) -> bool:
        return self._backend is not None and self._backend.alive

    async def _open_tab(self, session_id: str) -> Tab:
        backend = await self._started_backend()
        self._opened += 1
        client = f"context-{self._opened}"
        options = self._context_options()
        if self._guard is not None:
            from hermes.web.proxy import playwright_proxy

            # the context's own proxy name: its refusals are its own
            options["proxy"] = playwright_proxy(self._guard, client)
        opened = await backend.open(session_id, options)
        opened.context.set_default_timeout(self.settings.navigation_timeout * 1000)
        opened.context.set_default_navigation_timeout(self.settings.navigation_timeout * 1000)
        tab = Tab(session_id, opened.context, opened.release, client=client)
        if not backend.guarded_by_proxy:
            guard = RouteGuard(self.policy())
            await guard.install(opened.context)
            tab.route_guard = guard
        await tab.watch_context()
        old = self._tabs.pop(session_id, None)
        self._tabs[session_id] = tab
        if old is not None:
            with contextlib.suppress(Exception):
                await old.release()
        return tab

    def _context_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"accept_downloads": True,
                                   "viewport": {"width": 1280, "height": 800}}
        state = self._state_file()
        if self.settings.persist and state.is_file():
            options["storage_state"] = str(state)
        return options

    def _state_file(self) -> Path:
        return self.home.path / "browser" / "state.json"

    async def _started_backend(self) -> Backend:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._backend_alive():
                assert self._backend is not None
                return self._backend
            await self._stop_backend()
            self._tabs.clear()
            if self._playwright is None:
                from playwright.async_api import async_playwright

                self._playwright = await async_playwright().start()
            backend = await self._make_backend()
            try:
                await backend.start(self._playwright)
            except BaseException:
                self._close_guard()
                raise
            self._backend = backend
            return backend

    async def _make_backend(self) -> Backend:
        settings = self.settings
        if settings.backend == "local":
            problem = self.unavailable()
            if problem is not None:
                raise ToolError(problem)
            executable = find_chromium(settings.executable)
            assert executable is not None
            # the guard runs its own event loop: started off this one's thread
            proxy, switches = await asyncio.to_thread(self._guard_settings)
            return LocalBackend(executable, settings.headless, proxy, switches, self.environ)
        if settings.backend == "cdp":
            assert settings.cdp_url is not None
            # the user's browser reaches our loopback proxy: each context goes through it
            await asyncio.to_thread(self._guard_settings)
            return CdpBackend(settings.cdp_url, settings.navigation_timeout)
        provider = self._provider()
        if provider is None:
            raise ToolError(self.unavailable() or "no browser provider")
        return ProviderBackend(settings.backend, provider, settings.navigation_timeout)

    def _guard_settings(self) -> tuple[dict[str, str], list[str]]:
        from hermes.web.proxy import chromium_args, playwright_proxy, start_guard_proxy

        self._guard = start_guard_proxy(self.policy())
        switches = [arg for arg in chromium_args(self._guard)
                    if not arg.startswith(("--proxy-server=", "--proxy-bypass-list="))]
        return playwright_proxy(self._guard), merge_disabled_features(switches)

    def _provider(self) -> Any:
        try:
            return self._providers().get(self.settings.backend.removeprefix("plugin:"))
        except Exception:  # a plugin that fails to load registers nothing
            return None

    async def _close_tab(self, session_id: str) -> None:
        tab = self._tabs.pop(session_id, None)
        if tab is None:
            return
        if self.settings.persist:
            with contextlib.suppress(Exception):
                await self._save_state(tab)
        with contextlib.suppress(Exception):
            await tab.release()
        self._schedule_reap()

    async def _save_state(self, tab: Tab) -> None:
        from hermes.fsutil import private_dir

        path = self._state_file()
        private_dir(path.parent)
        state = await tab.context.storage_state()
        temporary = path.with_suffix(".tmp")
        temporary.touch(mode=0o600)
        temporary.write_text(__import__("json").dumps(state))
        temporary.replace(path)

    def _schedule_reap(self) -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(self.settings.idle_timeout + 0.05,
                        lambda: loop.create_task(self._reap()))

    async def _reap(self) -> None:
        """Close contexts unused for ``idle_timeout``; the browser too when none is left
        and nothing happened for as long."""
        now = time.monotonic()
        idle = self.settings.idle_timeout
        for session_id in [s for s, t in self._tabs.items() if now - t.last_used >= idle]:
            await self._close_tab(session_id)
        if not self._tabs and self._backend is not None and now - self._active >= idle:
            await self._stop_backend()
            self._close_guard()

    async def _stop_backend(self) -> None:
        backend, self._backend = self._backend, None
        if backend is not None:
            with contextlib.suppress(Exception):
                await backend.close()
        if self._playwright is not None:
            playwright, self._playwright = self._playwright, None
            with contextlib.suppress(Exception):
                await playwright.stop()

    async def _shutdown(self) -> None:
        for session_id in list(self._tabs):
            await self._close_tab(session_id)
        await self._stop_backend()

    def _close_guard(self) -> None:
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.close()


PLAYWRIGHT_DISABLED = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect",
    "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch")
"""Features Playwright 1.65 disables with its own ``--disable-features``: Chromium keeps
only the last such switch, so ours repeats them."""
QUIET = ("AutofillServerCommunication", "Translate", "InterestFeedContentSuggestions",
         "CertificateTransparencyComponentUpdater")
"""Chromium's own background requests (refused by the guard anyway, but reported as the
page's refusals if they were made)."""


def merge_disabled_features(switches: list[str]) -> list[str]:
    """``switches`` with one ``--disable-features`` holding Playwright's, theirs and
    ``QUIET``."""
    prefix = "--disable-features="
    named = [f for s in switches if s.startswith(prefix) for f in s[len(prefix):].split(",")]
    features = dict.fromkeys([*PLAYWRIGHT_DISABLED, *named, *QUIET])
    return [*(s for s in switches if not s.startswith(prefix)), prefix + ",".join(features)]


def open_browser(home: Home, settings: BrowserConfig, web: Any = None,
                 providers: Callable[[], Mapping[str, Any]] = dict,
                 environ: Mapping[str, str] | None = None) -> Iterator[BrowserService]:
    """Resource: the runtime's browser service (starts nothing), closed with the runtime."""
    service = BrowserService(home, settings, web, providers, environ)
    try:
        yield service
    finally:
        service.close()
