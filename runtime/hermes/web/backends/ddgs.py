"""DuckDuckGo and the other engines of the ``ddgs`` package (no key): ``DDGS().text(query,
max_results=)`` gives ``title``, ``href``, ``body``. ddgs is imported on the first search.

``web.proxy`` (e.g. Tor's ``socks5h://127.0.0.1:9150``) is handed to ``DDGS(proxy=)``;
unset, ddgs reads ``DDGS_PROXY``. Certificates are checked against the system's roots or
the bundle ``SSL_CERT_FILE`` names (an intercepting proxy's CA goes there)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from hermes.web.backends.base import (
    BackendSettings,
    SearchBackend,
    SearchFailed,
    SearchHit,
    text_of,
)


def _ddgs_client(settings: BackendSettings) -> Any:
    from ddgs import DDGS

    return DDGS(proxy=settings.proxy, timeout=max(1, round(settings.timeout)))


def _through(proxy: str | None) -> str:
    """`` through the proxy HOST:PORT`` (no credentials), for a failure's line."""
    if not proxy:
        return ""
    parts = urlsplit(proxy)
    return f" through the proxy {parts.hostname}" + (f":{parts.port}" if parts.port else "")


class DdgsBackend(SearchBackend):
    name = "ddgs"

    def __init__(self, settings: BackendSettings,
                 client: Callable[[BackendSettings], Any] = _ddgs_client):
        self.settings = settings
        self.client = client
        """Makes the ``DDGS`` object (its ``text`` method is the boundary we use)."""

    def search(self, query: str, limit: int) -> list[SearchHit]:
        try:
            results = self.client(self.settings).text(query, max_results=limit)
        except Exception as exc:  # ddgs raises DDGSException/TimeoutException, and no results
            message = " ".join(str(exc).split())[:200]
            if "No results found" in message:
                return []
            raise SearchFailed(f"ddgs: the search failed{_through(self.settings.proxy)} "
                               f"({type(exc).__name__}: {message})") from None
        return [SearchHit(text_of(r.get("title")), str(r.get("href") or ""),
                          text_of(r.get("body"))) for r in results or []]
