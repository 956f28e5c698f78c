"""Firecrawl v1: ``POST /v1/search`` (``query``, ``limit``) and ``POST /v1/scrape`` (``url``,
``formats: [markdown]``), ``Authorization: Bearer fc-...``; search results under ``data``
(``title``, ``url``, ``description``), a scraped page under ``data`` (``markdown``,
``metadata.title``)."""

from __future__ import annotations

from hermes.errors import ToolError
from hermes.web.backends.base import BackendPage, HttpBackend, SearchHit, text_of


class FirecrawlBackend(HttpBackend):
    name = "firecrawl"
    default_url = "https://api.firecrawl.dev"
    key_name = "FIRECRAWL_API_KEY"

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.api_key or ''}"}

    def search(self, query: str, limit: int) -> list[SearchHit]:
        data = self.request("POST", "/v1/search", headers=self._auth(),
                            json={"query": query, "limit": min(limit, 10)})
        return [SearchHit(text_of(r.get("title")), str(r.get("url") or ""),
                          text_of(r.get("description"))) for r in data.get("data") or []]

    def extract(self, urls: list[str]) -> list[BackendPage] | None:
        return [self._scrape(url) for url in urls]

    def _scrape(self, url: str) -> BackendPage:
        try:
            data = self.request("POST", "/v1/scrape", headers=self._auth(),
                                json={"url": url, "formats": ["markdown"],
                                      "onlyMainContent": True})
        except ToolError as exc:
            return BackendPage(url, error=str(exc))
        page = data.get("data") or {}
        metadata = page.get("metadata") or {}
        return BackendPage(url, text_of(metadata.get("title")), str(page.get("markdown") or ""))
