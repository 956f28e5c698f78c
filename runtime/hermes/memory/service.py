"""The memory service of one runtime: built-in files plus external providers.

The container builds it from the ``memory`` config group with
``builtin.builtin_memory`` (backend ``builtin``) or ``no_memory`` (backend
``none``); ``memory.providers`` adds external providers to either.

Frozen snapshots: ``begin_session()`` reads MEMORY.md and USER.md *now* and
returns an immutable ``MemorySnapshot``; ``snapshot()`` renders a fresh one.
The agent factory calls ``snapshot()`` once when it creates a session and
freezes the text into that session's system prompt, so every session of a
runtime sees the files as they were when it began; tool writes during a
session change the files only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes.errors import ConfigError, one_of
from hermes.memory.base import ExternalProvider, MemoryProvider
from hermes.memory.factstore import FactStore
from hermes.memory.fanout import ProviderFanout
from hermes.memory.store import EntryStore, MemorySnapshot
from hermes.memory.tool import memory_tool
from hermes.tools.base import ToolSpec

if TYPE_CHECKING:
    from hermes.config.schema import MemoryConfig
    from hermes.home import Home

PROVIDER_NAMES = ("factstore",)
"""External providers ``memory.providers`` may name (and ``plugin:NAME``: a plugin's)."""
PluginProviders = Callable[[], Mapping[str, Callable[..., Any]]]
"""Gives the memory providers enabled plugins registered (loading the plugins)."""


class MemoryService(MemoryProvider):
    """Optional built-in files (``store``) and external providers, as one service."""

    def __init__(self, store: EntryStore | None = None,
                 providers: Sequence[ExternalProvider] = (), *, prefetch_timeout: float = 3.0,
                 name: str = "none"):
        self.store = store
        self.fanout = ProviderFanout(providers, prefetch_timeout=prefetch_timeout)
        self.name = name

    def begin_session(self) -> MemorySnapshot:
        """Capture the memory files for a session starting now."""
        return self.store.capture() if self.store else MemorySnapshot({})

    def snapshot(self) -> str:
        return self.begin_session().render()

    def system_blocks(self) -> list[str]:
        return self.fanout.system_blocks()

    def prefetch(self, user_text: str) -> str:
        return self.fanout.prefetch(user_text)

    def sync(self, user_text: str, answer: str) -> None:
        self.fanout.sync(user_text, answer)

    def shutdown(self) -> None:
        self.fanout.shutdown()

    def tool_specs(self) -> list[ToolSpec]:
        own = [memory_tool(self.store)] if self.store else []
        return own + self.fanout.tool_specs()


def make_provider(name: str, home: Home, settings: MemoryConfig,
                  plugins: PluginProviders | None = None) -> ExternalProvider:
    """The external provider called ``name`` (one of ``PROVIDER_NAMES``, or
    ``plugin:NAME`` from ``plugins``)."""
    if name == "factstore":
        return FactStore(home.memories_dir / "facts.db", recall_limit=settings.recall_limit)
    registered = plugins() if plugins is not None and name.startswith("plugin:") else {}
    factory = registered.get(name.removeprefix("plugin:"))
    if factory is not None:
        provider: ExternalProvider = factory(home, settings)
        return provider
    plugin_names = [f"plugin:{n}" for n in registered]
    raise ConfigError(f"unknown memory provider {name!r}; available: "
                      f"{one_of([*PROVIDER_NAMES, *plugin_names])} (a plugin's, once enabled: "
                      "plugin:NAME)", key="memory.providers")


def external_providers(home: Home, settings: MemoryConfig,
                       plugins: PluginProviders | None = None) -> list[ExternalProvider]:
    return [make_provider(name, home, settings, plugins)
            for name in dict.fromkeys(settings.providers)]


def no_memory(home: Home, settings: MemoryConfig,
              extra: PluginProviders | None = None) -> MemoryProvider:
    """Backend ``none``: the no-op ``MemoryProvider``, or only the configured providers
    (``extra``: plugins' providers)."""
    providers = external_providers(home, settings, extra)
    if not providers:
        return MemoryProvider()
    return MemoryService(providers=providers, prefetch_timeout=settings.prefetch_timeout)
