"""A SearXNG instance's JSON API: ``GET /search?q=&format=json`` (the instance must list
``json`` under ``search.formats``); results under ``results`` (``title``, ``url``,
``content``). No key; ``web.base_url`` is required."""

from __future__ import annotations

from hermes.web.backends.base import HttpBackend, SearchFailed, SearchHit, text_of


class SearxngBackend(HttpBackend):
    name = "searxng"

    def unavailable(self) -> str | None:
        if not self.base_url:
            return ("web.base_url is not set: searxng needs the instance's address, e.g. "
                    "`hermes config set web.base_url http://localhost:8888`")
        return None

    def search(self, query: str, limit: int) -> list[SearchHit]:
        try:
            data = self.request("GET", "/search", params={"q": query, "format": "json"})
        except SearchFailed as exc:
            if "HTTP 403" in str(exc):
                raise SearchFailed(f"{exc}: enable JSON on the instance (settings.yml: "
                                   "search.formats: [html, json])") from None
            raise
        results = data.get("results") or [] if isinstance(data, dict) else []
        return [SearchHit(text_of(r.get("title")), str(r.get("url") or ""),
                          text_of(r.get("content"))) for r in results][:limit]
