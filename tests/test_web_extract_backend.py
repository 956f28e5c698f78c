"""web_extract through a search backend that offers extraction (tavily, exa, firecrawl do):
its pages are used, under the same address rules; where it fails, the page is
extracted here. The backend is a fake on the real base class (tests/fake_search.py
covers each service's wire format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes.tools.registry import build_tool_registry
from hermes.web.backends.base import BackendPage, SearchBackend, SearchFailed
from hermes.web.extract_tool import web_extract_tool
from test_tools_support import make_context
from webpages import WebPages, webpages  # noqa: F401 — the fixture


class ExtractingBackend(SearchBackend):
    """Extracts what it is asked for, except pages named in ``fails``."""

    name = "fakeextract"

    def __init__(self, fails: tuple[str, ...] = (), broken: bool = False):
        self.asked: list[str] = []
        self.fails = fails
        self.broken = broken

    def extract(self, urls: list[str]) -> list[BackendPage] | None:
        self.asked += urls
        if self.broken:
            raise SearchFailed("fakeextract: HTTP 502 from the service")
        return [BackendPage(url, error="blocked by the site") if any(f in url for f in self.fails)
                else BackendPage(url, "Remote title", f"Extracted remotely: {url}")
                for url in urls]


def run(tmp_path: Path, backend: SearchBackend, pages: WebPages, *paths: str,
        allow: bool = True) -> list[dict[str, Any]]:
    web = {"allow_private": [pages.allow] if allow else [], "cache_ttl": 0}
    registry = build_tool_registry(["web"], environ={},
                                   specs=[web_extract_tool(web, backend=lambda: backend)])
    urls = [pages.url(path) for path in paths]
    result = registry.dispatch("web_extract", {"urls": urls}, make_context(tmp_path))
    entries: list[dict[str, Any]] = json.loads(result.content)["results"]
    return entries


def test_the_backend_s_extraction_is_used_where_it_offers_one(
        tmp_path: Path, webpages: WebPages) -> None:  # noqa: F811
    backend = ExtractingBackend(fails=("/docs",))
    before = webpages.requests.count("/article")
    remote, local = run(tmp_path, backend, webpages, "/article", "/docs")
    assert "Extracted remotely" in remote["content"] and "Remote title" in remote["content"]
    assert remote["extracted_by"] == "fakeextract" and remote["content"].startswith("<web-")
    assert webpages.requests.count("/article") == before  # not fetched here
    assert "| Option | Default | Meaning |" in local["content"]  # the backend failed it
    assert "extracted_by" not in local


def test_a_failing_backend_leaves_extraction_here(tmp_path: Path,
                                                  webpages: WebPages) -> None:  # noqa: F811
    (entry,) = run(tmp_path, ExtractingBackend(broken=True), webpages, "/article")
    assert "Millbrook" in entry["content"] and "extracted_by" not in entry


def test_the_address_rules_hold_before_the_backend_is_asked(
        tmp_path: Path, webpages: WebPages) -> None:  # noqa: F811
    backend = ExtractingBackend()
    (entry,) = run(tmp_path, backend, webpages, "/article", allow=False)
    assert "a loopback address" in entry["error"]
    assert backend.asked == []
