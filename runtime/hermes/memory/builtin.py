"""Backend ``builtin``: ``memories/MEMORY.md`` and ``memories/USER.md`` in the home,
with the ``memory`` tool, plus any external providers the config names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hermes.memory.base import ExternalProvider
from hermes.memory.edits import ENTRY_DELIMITER
from hermes.memory.service import MemoryService, PluginProviders, external_providers
from hermes.memory.store import EntryStore

if TYPE_CHECKING:
    from hermes.config.schema import MemoryConfig
    from hermes.home import Home

__all__ = ["ENTRY_DELIMITER", "BuiltinMemory", "builtin_memory"]


class BuiltinMemory(MemoryService):
    """The memory files in ``directory`` with their character limits."""

    def __init__(self, directory: Path, memory_char_limit: int, user_char_limit: int, *,
                 providers: Sequence[ExternalProvider] = (), prefetch_timeout: float = 3.0):
        files = EntryStore(directory, memory_char_limit, user_char_limit)
        super().__init__(files, providers, prefetch_timeout=prefetch_timeout, name="builtin")
        self.files = files
        """MEMORY.md and USER.md (the same object as ``store``, never None here)."""


def builtin_memory(home: Home, settings: MemoryConfig,
                   extra: PluginProviders | None = None) -> BuiltinMemory:
    """The ``builtin`` backend of ``home`` as ``settings`` configure it (``extra``:
    plugins' memory providers, for ``plugin:NAME``)."""
    return BuiltinMemory(home.memories_dir, settings.memory_char_limit,
                         settings.user_char_limit,
                         providers=external_providers(home, settings, extra),
                         prefetch_timeout=settings.prefetch_timeout)
