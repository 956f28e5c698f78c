"""A SearXNG ``WebSearchProvider`` as hermes-agent's plugins write one."""

from __future__ import annotations

import os
from typing import Any

from agent.web_search_provider import WebSearchProvider


def _searxng_url() -> str:
    try:
        from hermes_cli.config import get_env_value

        val = get_env_value("SEARXNG_URL")
    except Exception:
        val = None
    if val is None:
        val = os.getenv("SEARXNG_URL", "")
    return (val or "").strip()


class SearxProvider(WebSearchProvider):
    @property
    def name(self) -> str:
        return "searx"

    def is_available(self) -> bool:
        return bool(_searxng_url())

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        import httpx

        try:
            resp = httpx.get(f"{_searxng_url().rstrip('/')}/search",
                             params={"q": query, "format": "json", "pageno": 1}, timeout=15)
            resp.raise_for_status()
        except httpx.HTTPStatusError as exc:
            return {"success": False,
                    "error": f"SearXNG returned HTTP {exc.response.status_code}"}
        results = sorted(resp.json().get("results", []),
                         key=lambda r: float(r.get("score", 0)), reverse=True)[:limit]
        return {"success": True, "data": {"web": [
            {"title": str(r.get("title", "")), "url": str(r.get("url", "")),
             "description": str(r.get("content", "")), "position": i + 1}
            for i, r in enumerate(results)]}}
