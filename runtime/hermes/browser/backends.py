"""Where the browser comes from: Chromium started here (``local``), a browser the user
runs (``cdp``), or a plugin's provider; each hands out one isolated context per session.

A backend is started on the browser thread (``BrowserLoop``) and only ever used there.
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from hermes.errors import ToolError

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""What ``browser.executable: null`` looks for on PATH, in order."""


def find_chromium(executable: str | None) -> str | None:
    """The browser to start: ``executable`` (a path or a name on PATH), else the first of
    ``CHROMIUM_NAMES`` on PATH; None when there is none."""
    if executable:
        return shutil.which(executable)
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


@dataclass
class Opened:
    """One session's context and how to let go of it."""

    context: Any
    """A Playwright ``BrowserContext`` (async API)."""
    release: Callable[[], Awaitable[None]]
    """Closes the context (and whatever the backend made for it alone)."""


class Backend(ABC):
    """Starts (or reaches) the browser and makes one context per session."""

    guarded_by_proxy = False
    """True when every request goes through the address guard proxy; otherwise the
    service checks each request by routing it (``hermes.browser.guard``)."""

    @abstractmethod
    async def start(self, playwright: Any) -> None:
        """Launch or connect (raises ``ToolError`` with one line when it cannot)."""

    @abstractmethod
    async def open(self, session_id: str, options: dict[str, Any]) -> Opened:
        """A new context for ``session_id`` (``options``: ``new_context`` keywords)."""

    @abstractmethod
    async def close(self) -> None:
        """Let go of the browser (closing it if we started it)."""

    @property
    def alive(self) -> bool:
        return True


class SharedBrowser(Backend):
    """One browser for every session: contexts made with ``new_context``."""

    def __init__(self) -> None:
        self.browser: Any = None

    @property
    def alive(self) -> bool:
        return self.browser is not None and self.browser.is_connected()

    async def open(self, session_id: str, options: dict[str, Any]) -> Opened:
        context = await self.browser.new_context(**options)
        return Opened(context, context.close)

    async def close(self) -> None:
        if self.browser is not None:
            browser, self.browser = self.browser, None
            await browser.close()


class LocalBackend(SharedBrowser):
    """Chromium on this machine, launched through the guard proxy (``proxy``: the
    ``proxy=`` setting and extra switches, or None for no guard)."""

    guarded_by_proxy = True

    def __init__(self, executable: str, headless: bool, proxy: dict[str, str] | None,
                 switches: list[str], environ: dict[str, str] | None = None) -> None:
        super().__init__()
        self.executable, self.headless, self.environ = executable, headless, environ
        self.proxy, self.switches = proxy, switches
        self.guarded_by_proxy = proxy is not None

    async def start(self, playwright: Any) -> None:
        try:
            self.browser = await playwright.chromium.launch(
                executable_path=self.executable, headless=self.headless, proxy=self.proxy,
                args=self.switches, env=self.environ, handle_sigint=False,
                handle_sigterm=False, handle_sighup=False)
        except Exception as exc:
            raise ToolError(f"could not start {self.executable}: {first_line(exc)}") from exc


class CdpBackend(SharedBrowser):
    """A browser the user runs on this machine, reached at ``url`` over the DevTools
    protocol; each context goes through the guard proxy on loopback. It stays running
    when we let go of it."""

    guarded_by_proxy = True

    def __init__(self, url: str, timeout: float) -> None:
        super().__init__()
        self.url, self.timeout = url, timeout

    async def start(self, playwright: Any) -> None:
        try:
            self.browser = await playwright.chromium.connect_over_cdp(
                self.url, timeout=self.timeout * 1000)
        except Exception as exc:
            raise ToolError(f"could not reach the browser at browser.cdp_url {self.url}: "
                            f"{first_line(exc)} (start it with --remote-debugging-port)"
                            ) from exc


class ProviderBackend(Backend):
    """A plugin's browser provider (hermes-agent's ``BrowserProvider``): one remote
    browser per session from ``create_session(session_id)``, which returns its
    ``{"cdp_url": ...}`` (or the URL, or a Playwright ``Browser``); ``close_session``
    with the provider's id at the end."""

    def __init__(self, name: str, provider: Any, timeout: float) -> None:
        self.name, self.provider, self.timeout = name, provider, timeout
        self.playwright: Any = None

    async def start(self, playwright: Any) -> None:
        self.playwright = playwright

    async def open(self, session_id: str, options: dict[str, Any]) -> Opened:
        import asyncio

        made = await asyncio.to_thread(self.provider.create_session, session_id)
        browser = made if hasattr(made, "new_context") else await self._connect(made)
        their_id = made.get("bb_session_id") if isinstance(made, dict) else None
        try:
            context = await browser.new_context(**options)
        except Exception:
            await browser.close()
            raise

        async def release() -> None:
            try:
                await context.close()
                await browser.close()
            finally:
                if their_id is not None and hasattr(self.provider, "close_session"):
                    await asyncio.to_thread(self.provider.close_session, their_id)

        return Opened(context, release)

    async def _connect(self, made: Any) -> Any:
        url = made.get("cdp_url") if isinstance(made, dict) else made
        if not isinstance(url, str) or not url:
            raise ToolError(f"browser provider {self.name}: create_session gave no cdp_url")
        try:
            return await self.playwright.chromium.connect_over_cdp(url,
                                                                   timeout=self.timeout * 1000)
        except Exception as exc:
            raise ToolError(f"browser provider {self.name}: could not connect: "
                            f"{first_line(exc)}") from exc

    async def close(self) -> None:
        return None


def first_line(exc: BaseException) -> str:
    """Playwright's message without its call log."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
