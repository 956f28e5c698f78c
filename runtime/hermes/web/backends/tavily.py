"""Tavily: ``POST /search`` (``query``, ``max_results``) and ``POST /extract`` (``urls``,
``format``), ``Authorization: Bearer tvly-...``; search results under ``results``
(``title``, ``url``, ``content``), extracted pages under ``results`` (``url``,
``raw_content``) and ``failed_results`` (``url``, ``error``)."""

from __future__ import annotations

from hermes.web.backends.base import BackendPage, HttpBackend, SearchHit, text_of


class TavilyBackend(HttpBackend):
    name = "tavily"
    default_url = "https://api.tavily.com"
    key_name = "TAVILY_API_KEY"

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.settings.api_key or ''}"}

    def search(self, query: str, limit: int) -> list[SearchHit]:
        data = self.request("POST", "/search", headers=self._auth(),
                            json={"query": query, "max_results": min(limit, 20),
                                  "search_depth": "basic"})
        return [SearchHit(text_of(r.get("title")), str(r.get("url") or ""),
                          text_of(r.get("content"))) for r in data.get("results") or []]

    def extract(self, urls: list[str]) -> list[BackendPage] | None:
        data = self.request("POST", "/extract", headers=self._auth(),
                            json={"urls": urls, "format": "markdown"})
        pages = {str(r.get("url")): BackendPage(str(r.get("url")), str(r.get("title") or ""),
                                                str(r.get("raw_content") or ""))
                 for r in data.get("results") or []}
        failed = {str(r.get("url")): BackendPage(str(r.get("url")), error=text_of(
            r.get("error")) or "not extracted") for r in data.get("failed_results") or []}
        return [pages.get(url) or failed.get(url) or BackendPage(url, error="not extracted")
                for url in urls]
