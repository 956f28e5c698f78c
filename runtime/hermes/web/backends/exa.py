"""Exa: ``POST /search`` (``query``, ``numResults``, ``contents.highlights``) and ``POST
/contents`` (``urls``, ``text``), header ``x-api-key``; results under ``results``
(``title``, ``url``, ``highlights``/``text``), failures of ``/contents`` under
``statuses`` (``id``, ``status``, ``error.tag``)."""

from __future__ import annotations

from typing import Any

from hermes.web.backends.base import BackendPage, HttpBackend, SearchHit, text_of


class ExaBackend(HttpBackend):
    name = "exa"
    default_url = "https://api.exa.ai"
    key_name = "EXA_API_KEY"

    def _auth(self) -> dict[str, str]:
        return {"x-api-key": self.settings.api_key or ""}

    def search(self, query: str, limit: int) -> list[SearchHit]:
        data = self.request("POST", "/search", headers=self._auth(), json={
            "query": query, "numResults": min(limit, 25), "type": "auto",
            "contents": {"highlights": {"numSentences": 3, "highlightsPerUrl": 1}}})
        return [SearchHit(text_of(r.get("title")), str(r.get("url") or ""),
                          _snippet(r)) for r in data.get("results") or []]

    def extract(self, urls: list[str]) -> list[BackendPage] | None:
        data = self.request("POST", "/contents", headers=self._auth(),
                            json={"urls": urls, "text": True})
        pages = {str(r.get("url")): BackendPage(str(r.get("url")), str(r.get("title") or ""),
                                                str(r.get("text") or ""))
                 for r in data.get("results") or []}
        failed = {str(s.get("id")): BackendPage(str(s.get("id")), error=text_of(
            (s.get("error") or {}).get("tag")) or "not extracted")
            for s in data.get("statuses") or [] if s.get("status") != "success"}
        return [pages.get(url) or failed.get(url) or BackendPage(url, error="not extracted")
                for url in urls]


def _snippet(result: dict[str, Any]) -> str:
    return text_of(result.get("highlights")) or text_of(str(result.get("text") or "")[:500])
