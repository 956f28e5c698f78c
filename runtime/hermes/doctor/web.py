"""Whether ``web_search`` is offered with the configured backend, and what it needs if not."""

from __future__ import annotations

from typing import Any

from hermes.doctor.base import Check


def check_web_search(web: Any) -> Check:
    """One row: the backend ``web_search`` uses, or why the tool is hidden (no key, no
    searxng address, ``none``); a plugin's backend is named, checked when plugins load."""
    from hermes.web.search import configured_backend

    if web.backend.startswith("plugin:"):
        return Check("web search", "ok", f"{web.backend} (a plugin's; checked when it loads)")
    backend = configured_backend(web, dict)
    reason = backend if isinstance(backend, str) else backend.unavailable()
    if web.backend == "none":
        return Check("web search", "ok", "off (web.backend: none): web_search is hidden")
    if reason:
        return Check("web search", "warn", f"{web.backend}: web_search is hidden", reason)
    where = f" at {web.base_url}" if web.base_url else ""
    return Check("web search", "ok", f"{web.backend}{where}")
