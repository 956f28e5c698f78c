"""A web search provider and a browser provider (not supported here yet), middleware,
image and video generation, a cron scheduler, and one plain tool that keeps working."""

from __future__ import annotations

import json


class LiteWebSearchProvider:
    name = "lite"

    def search(self, query: str, limit: int = 5) -> list[dict]:
        return [{"title": query, "url": "https://lite.example/"}]


class LiteBrowserProvider:
    name = "lite-browser"


def _status(args: dict, **kwargs) -> str:
    return json.dumps({"status": "lite is up"})


def register(ctx) -> None:
    ctx.register_web_search_provider(LiteWebSearchProvider())
    ctx.register_browser_provider(LiteBrowserProvider())
    ctx.register_middleware("request", lambda **kwargs: None)
    ctx.register_image_gen_provider(object())
    ctx.register_video_gen_provider(object())
    ctx.register_cron_scheduler(object())
    ctx.register_tool(
        name="lite_status", toolset="web-lite",
        schema={"name": "lite_status", "description": "Whether the lite backend is up.",
                "parameters": {"type": "object", "properties": {}}},
        handler=_status)
