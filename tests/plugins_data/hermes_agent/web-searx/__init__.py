"""SearXNG search plugin, shaped like hermes-agent's bundled one."""

from __future__ import annotations

from plugins.web.web_searx.provider import SearxProvider


def register(ctx) -> None:
    ctx.register_web_search_provider(SearxProvider())
