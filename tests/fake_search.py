"""Fake search services on loopback, each speaking one backend's real wire format (as
their API documentation gives it), so our adapters' real HTTP code runs against them:

- brave: ``GET /res/v1/web/search?q=&count=``, ``X-Subscription-Token``; ``web.results``;
- searxng: ``GET /search?q=&format=json`` (403 without ``format=json``, as an instance
  that does not enable JSON answers); ``results``;
- tavily: ``POST /search`` and ``POST /extract``, ``Authorization: Bearer``;
- exa: ``POST /search`` and ``POST /contents``, ``x-api-key``;
- firecrawl: ``POST /v1/search`` and ``POST /v1/scrape``, ``Authorization: Bearer``.

``FakeSearch("brave", key="...")`` starts one; ``.hits`` are what every search returns,
``.pages`` what extraction returns by URL, ``.requests`` what arrived.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

KEYS = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY", "exa": "EXA_API_KEY",
        "firecrawl": "FIRECRAWL_API_KEY"}


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


DEFAULT_HITS = [
    Hit("Widget docs — Install", "https://docs.widget.example/install", "pip install widget"),
    Hit("Widget docs — Install (again)", "https://DOCS.widget.example:443/install/#top",
        "the same page, another address"),
    Hit("Widget on the forum", "https://forum.example/t/widget?utm_source=x", "questions"),
    Hit("Not a web page", "ftp://files.example/widget.tar", "an FTP link"),
    Hit("Widget changelog", "https://docs.widget.example/changes", "what changed in 2.0"),
]


@dataclass
class FakeSearch:
    backend: str
    key: str = "fake-search-key-0123456789"
    hits: list[Hit] = field(default_factory=lambda: list(DEFAULT_HITS))
    pages: dict[str, tuple[str, str]] = field(default_factory=dict)
    """URL -> (title, markdown) that extraction returns; other URLs fail."""
    status: int | None = None
    """Answer every request with this HTTP status instead (an outage, a bad key)."""
    requests: list[Seen] = field(default_factory=list)

    def __enter__(self) -> FakeSearch:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                fake.handle(self, json.loads(self.rfile.read(length) or b"null"))

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def handle(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        parts = urlsplit(handler.path)
        seen = Seen(handler.command, parts.path, parse_qs(parts.query),
                    {k.lower(): v for k, v in handler.headers.items()}, body)
        self.requests.append(seen)
        status, answer = self.answer(seen)
        data = json.dumps(answer).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def answer(self, seen: Seen) -> tuple[int, Any]:
        if self.status is not None:
            return self.status, {"error": f"fake {self.backend} answers {self.status}"}
        if not self.authorised(seen):
            return 401, self.unauthorised()
        route = ROUTES.get((self.backend, seen.method, seen.path))
        if route is None:
            return 404, {"error": f"no route {seen.method} {seen.path}"}
        return route(self, seen)

    def authorised(self, seen: Seen) -> bool:
        header = {"brave": ("x-subscription-token", self.key),
                  "exa": ("x-api-key", self.key),
                  "tavily": ("authorization", f"Bearer {self.key}"),
                  "firecrawl": ("authorization", f"Bearer {self.key}")}.get(self.backend)
        return header is None or seen.headers.get(header[0]) == header[1]

    def unauthorised(self) -> Any:
        if self.backend == "brave":
            return {"type": "ErrorResponse", "error": {
                "id": "0", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID",
                "detail": "The provided subscription token is invalid."}}
        if self.backend == "firecrawl":
            return {"success": False, "error": "Unauthorized: Invalid token"}
        return {"detail": {"error": "Unauthorized: missing or invalid API key."}}


def _query(seen: Seen, name: str) -> str:
    return (seen.query.get(name) or [""])[0]


def _brave(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    count = int(_query(seen, "count") or 20)
    results = [{"type": "search_result", "title": h.title, "url": h.url,
                "description": h.snippet, "is_source_local": False, "language": "en",
                "profile": {"name": "Example"}} for h in fake.hits[:count]]
    return 200, {"type": "search", "query": {"original": _query(seen, "q")},
                 "mixed": {"type": "mixed", "main": []},
                 "web": {"type": "search", "results": results, "family_friendly": True}}


def _searxng(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    if _query(seen, "format") != "json":
        return 403, {"error": "Forbidden"}
    results = [{"url": h.url, "title": h.title, "content": h.snippet, "engine": "duckduckgo",
                "engines": ["duckduckgo", "brave"], "positions": [i + 1], "score": 1.0,
                "category": "general", "parsed_url": list(urlsplit(h.url))}
               for i, h in enumerate(fake.hits)]
    return 200, {"query": _query(seen, "q"), "number_of_results": len(results),
                 "results": results, "answers": [], "corrections": [], "infoboxes": [],
                 "suggestions": [], "unresponsive_engines": []}


def _tavily_search(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    limit = int(seen.body.get("max_results") or 5)
    results = [{"title": h.title, "url": h.url, "content": h.snippet, "score": 0.9,
                "raw_content": None} for h in fake.hits[:limit]]
    return 200, {"query": seen.body["query"], "follow_up_questions": None, "answer": None,
                 "images": [], "results": results, "response_time": 0.42}


def _tavily_extract(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    urls = seen.body["urls"]
    return 200, {
        "results": [{"url": u, "raw_content": fake.pages[u][1], "images": []}
                    for u in urls if u in fake.pages],
        "failed_results": [{"url": u, "error": "Failed to fetch url"}
                           for u in urls if u not in fake.pages],
        "response_time": 0.02}


def _exa_search(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    limit = int(seen.body.get("numResults") or 10)
    results = [{"id": h.url, "title": h.title, "url": h.url, "publishedDate": None,
                "author": None, "highlights": [h.snippet], "highlightScores": [0.5]}
               for h in fake.hits[:limit]]
    return 200, {"requestId": "req-fake", "resolvedSearchType": "neural",
                 "results": results, "costDollars": {"total": 0.005}}


def _exa_contents(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    urls = seen.body["urls"]
    return 200, {
        "requestId": "req-fake",
        "results": [{"id": u, "url": u, "title": fake.pages[u][0], "text": fake.pages[u][1]}
                    for u in urls if u in fake.pages],
        "statuses": [{"id": u, "status": "success"} if u in fake.pages else
                     {"id": u, "status": "error",
                      "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}}
                     for u in urls]}


def _firecrawl_search(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    limit = int(seen.body.get("limit") or 5)
    return 200, {"success": True, "data": [
        {"title": h.title, "description": h.snippet, "url": h.url}
        for h in fake.hits[:limit]], "warning": None}


def _firecrawl_scrape(fake: FakeSearch, seen: Seen) -> tuple[int, Any]:
    url = seen.body["url"]
    if url not in fake.pages:
        return 408, {"success": False, "error": f"Request timed out scraping {url}"}
    title, markdown = fake.pages[url]
    return 200, {"success": True, "data": {"markdown": markdown, "metadata": {
        "title": title, "sourceURL": url, "statusCode": 200}}}


ROUTES = {
    ("brave", "GET", "/res/v1/web/search"): _brave,
    ("searxng", "GET", "/search"): _searxng,
    ("tavily", "POST", "/search"): _tavily_search,
    ("tavily", "POST", "/extract"): _tavily_extract,
    ("exa", "POST", "/search"): _exa_search,
    ("exa", "POST", "/contents"): _exa_contents,
    ("firecrawl", "POST", "/v1/search"): _firecrawl_search,
    ("firecrawl", "POST", "/v1/scrape"): _firecrawl_scrape,
}
