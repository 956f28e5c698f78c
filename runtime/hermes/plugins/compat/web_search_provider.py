"""hermes-agent's ``agent.web_search_provider``: ``WebSearchProvider``, the base of a web
search backend a plugin registers with ``ctx.register_web_search_provider(provider)``;
``web.backend: plugin:<name>`` selects it (``hermes.web.backends.plugin``). Its
``get_provider_env(NAME)`` reads the process environment, then the profile's ``.env``."""

from __future__ import annotations

import abc
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("agent.web_search_provider")


class WebSearchProvider(abc.ABC):
    """hermes-agent's web provider base: ``name``, ``is_available()``, and ``search``
    (answering ``{"success": True, "data": {"web": [{"title", "url", "description",
    "position"}]}}``) and/or ``extract(urls)`` (``[{"url", "title", "content",
    "raw_content", "error"}]``), announced by ``supports_search``/``supports_extract``."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The name ``web.backend: plugin:<name>`` selects."""

    @property
    def display_name(self) -> str:
        return self.name

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Whether it can serve calls (a key set, an address configured); no network."""

    def supports_search(self) -> bool:
        return True

    def supports_extract(self) -> bool:
        return False

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        raise NotImplementedError(f"{self.name} does not support search")

    def extract(self, urls: list[str], **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name} does not support extract")

    def get_setup_schema(self) -> dict[str, Any]:
        return {"name": self.display_name, "env_vars": []}


def bind(home: Path | None) -> dict[str, Callable[..., Any]]:
    """``get_provider_env`` of one plugin: the environment, then its profile's ``.env``."""
    def get_provider_env(name: str) -> str:
        from hermes.credentials import read_env_file

        value = os.environ.get(name) or (
            read_env_file(home / ".env").get(name, "") if home is not None else "")
        return (value or "").strip()

    return {"get_provider_env": get_provider_env}
