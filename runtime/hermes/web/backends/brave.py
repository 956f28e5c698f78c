"""Brave Search API: ``GET /res/v1/web/search?q=&count=`` with ``X-Subscription-Token``;
results under ``web.results`` (``title``, ``url``, ``description``)."""

from __future__ import annotations

from hermes.web.backends.base import HttpBackend, SearchHit, text_of


class BraveBackend(HttpBackend):
    name = "brave"
    default_url = "https://api.search.brave.com"
    key_name = "BRAVE_API_KEY"

    def search(self, query: str, limit: int) -> list[SearchHit]:
        data = self.request("GET", "/res/v1/web/search",
                            params={"q": query, "count": min(limit, 20)},
                            headers={"X-Subscription-Token": self.settings.api_key or ""})
        results = ((data.get("web") or {}).get("results") or []) if isinstance(data, dict) \
            else []
        return [SearchHit(text_of(r.get("title")), str(r.get("url") or ""),
                          text_of(r.get("description"))) for r in results]
