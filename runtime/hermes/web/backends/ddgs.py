"""DuckDuckGo and the other engines of the ``ddgs`` package (no key): ``DDGS().text(query,
max_results=)`` gives ``title``, ``href``, ``body``. ddgs is imported on the first search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes.web.backends.base import (
    BackendSettings,
    SearchBackend,
    SearchFailed,
    SearchHit,
    text_of,
)


def _ddgs_client(timeout: float) -> Any:
    from ddgs import DDGS

    return DDGS(timeout=max(1, round(timeout)))


class DdgsBackend(SearchBackend):
    name = "ddgs"

    def __init__(self, settings: BackendSettings,
                 client: Callable[[float], Any] = _ddgs_client):
        self.settings = settings
        self.client = client
        """Makes the ``DDGS`` object (its ``text`` method is the boundary we use)."""

    def search(self, query: str, limit: int) -> list[SearchHit]:
        try:
            results = self.client(self.settings.timeout).text(query, max_results=limit)
        except Exception as exc:  # ddgs raises DDGSException/TimeoutException, and no results
            message = " ".join(str(exc).split())[:200]
            if "No results found" in message:
                return []
            raise SearchFailed(f"ddgs: the search failed ({type(exc).__name__}: "
                               f"{message})") from None
        return [SearchHit(text_of(r.get("title")), str(r.get("href") or ""),
                          text_of(r.get("body"))) for r in results or []]
