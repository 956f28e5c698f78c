"""The ``browser`` config group: the browser the ``browser_*`` tools drive
(``hermes.browser``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.learning_schema import Duration
from hermes.config.plugins_schema import _builtin_or_plugin
from hermes.config.sections import NonBlank, Section

BUILT_IN_BACKENDS = ("local", "cdp")
"""Backends of the runtime itself; ``plugin:NAME`` is a plugin's browser provider."""
BrowserBackend = Annotated[str, AfterValidator(_builtin_or_plugin(*BUILT_IN_BACKENDS))]
"""``browser.backend``: a built-in backend, or ``plugin:NAME`` (checked when the plugins
load), like ``web.backend`` and ``environment.kind``."""


def _cdp_url(value: str | None) -> str | None:
    if value is None or value.split("://", 1)[0] in ("http", "https", "ws", "wss"):
        return value
    raise PydanticCustomError("cdp_url", "expected an http(s):// or ws(s):// URL of a "
                              "browser's DevTools endpoint, e.g. http://127.0.0.1:9222")


class BrowserConfig(Section):
    """The browser of the ``browser`` toolset: one per runtime, started at the first
    browser tool call, one isolated context (cookies, storage) per session."""

    name: NonBlank = "local"
    """The option's name (the YAML file under ``conf/browser/``)."""
    backend: BrowserBackend = "local"
    """``local``: start Chromium on this machine; ``cdp``: connect to a browser you run
    (``cdp_url``); ``plugin:NAME``: a plugin's browser provider (``register_browser_provider``)."""
    executable: str | None = None
    """Chromium's path (``local``); null: ``chromium``, ``chromium-browser`` or
    ``google-chrome`` on PATH."""
    headless: bool = True
    """Run Chromium without a window (``local``)."""
    cdp_url: Annotated[str | None, AfterValidator(_cdp_url)] = None
    """The DevTools endpoint of a running browser (``cdp``), e.g. ``http://127.0.0.1:9222``
    (start it with ``chromium --remote-debugging-port=9222``)."""
    persist: bool = False
    """Keep cookies and storage between sessions, in the home (``browser/state.json``,
    private to the profile); false: every session starts empty and leaves nothing."""
    idle_timeout: Duration = 300.0
    """A session's browser context closes after this long unused (``5m``); the browser
    closes when no context is left for as long."""
    navigation_timeout: float = Field(30.0, gt=0)
    """Seconds a navigation (or a click's) may take before the tool says it timed out."""
    snapshot_max_chars: int = Field(12_000, ge=500)
    """One page of ``browser_snapshot``; longer snapshots are paged (``page=2``)."""

    @model_validator(mode="after")
    def _cdp_needs_url(self) -> BrowserConfig:
        if self.backend == "cdp" and not self.cdp_url:
            raise PydanticCustomError("cdp_url", "browser.cdp_url: missing — the cdp backend "
                                      "connects to it, e.g. http://127.0.0.1:9222")
        return self
