"""A plugin's web search provider (``ctx.register_web_search_provider(provider)``, hermes-agent's
``WebSearchProvider`` interface) as a ``SearchBackend``: ``search(query, limit)`` answers
``{"success": true, "data": {"web": [{"title", "url", "description"}]}}`` or
``{"success": false, "error": "..."}``; ``extract(urls)`` (when ``supports_extract()``)
answers ``[{"url", "title", "content", "raw_content", "error"}]``, sync or async."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from hermes.web.backends.base import BackendPage, SearchBackend, SearchFailed, SearchHit, text_of


class PluginBackend(SearchBackend):
    def __init__(self, provider: Any):
        self.provider = provider
        self.name = str(getattr(provider, "name", "plugin"))

    def unavailable(self) -> str | None:
        available = getattr(self.provider, "is_available", None)
        if callable(available) and not available():
            return f"the plugin web search provider {self.name} is not available (its key?)"
        supports = getattr(self.provider, "supports_search", None)
        if callable(supports) and not supports():
            return f"the plugin web search provider {self.name} does not search"
        return None

    def search(self, query: str, limit: int) -> list[SearchHit]:
        answer = _settled(self.provider.search(query, limit))
        if isinstance(answer, list):  # a bare list of results, as some plugins answer
            answer = {"success": True, "data": answer}
        if not isinstance(answer, dict) or not answer.get("success", True):
            error = answer.get("error") if isinstance(answer, dict) else answer
            raise SearchFailed(f"{self.name}: {text_of(error) or 'the search failed'}")
        data = answer.get("data") or {}
        results = data.get("web") if isinstance(data, dict) else data
        return [SearchHit(text_of(r.get("title")), str(r.get("url") or ""),
                          text_of(r.get("description") or r.get("snippet")))
                for r in results or [] if isinstance(r, dict)]

    def extract(self, urls: list[str]) -> list[BackendPage] | None:
        supports = getattr(self.provider, "supports_extract", None)
        if not (callable(supports) and supports()):
            return None
        answer = _settled(self.provider.extract(urls))
        rows = answer.get("data") if isinstance(answer, dict) else answer
        return [BackendPage(str(r.get("url") or ""), text_of(r.get("title")),
                            str(r.get("raw_content") or r.get("content") or ""),
                            text_of(r.get("error")) or None)
                for r in rows or [] if isinstance(r, dict)]


def _settled(value: Any) -> Any:
    return asyncio.run(value) if inspect.iscoroutine(value) else value
