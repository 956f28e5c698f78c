"""The built-in search backends, one module each, imported only when chosen."""

from __future__ import annotations

import importlib
from typing import Any

from hermes.web.backends.base import BackendSettings, SearchBackend

BUILTIN = {"ddgs": "ddgs:DdgsBackend", "searxng": "searxng:SearxngBackend",
           "brave": "brave:BraveBackend", "tavily": "tavily:TavilyBackend",
           "exa": "exa:ExaBackend", "firecrawl": "firecrawl:FirecrawlBackend"}
"""``web.backend`` -> ``module:class`` under this package."""


def builtin_backend(name: str, web: Any) -> SearchBackend:
    """The built-in backend ``name`` under the ``web`` settings."""
    module, _, cls = BUILTIN[name].partition(":")
    backend = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    return backend(BackendSettings.from_config(web))  # type: ignore[no-any-return]
