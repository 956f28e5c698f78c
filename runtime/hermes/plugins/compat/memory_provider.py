"""hermes-agent's ``agent.memory_provider``: ``MemoryProvider``, run here as one of the
``memory.providers`` (``hermes.memory.base.ExternalProvider``).

A plugin's subclass keeps hermes-agent's interface; the base answers Hermes' calls with
it: ``initialize()`` calls ``initialize(session_id, hermes_home=..., platform=...)``,
``system_block`` is ``system_prompt_block``, ``sync`` is ``sync_turn``, and the tools of
``get_tool_schemas`` run through ``handle_tool_call`` (toolset ``memory``). The optional
hooks (``on_turn_start``, ``on_pre_compress``, ``on_delegation``, ...) are never called.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes.memory.base import ExternalProvider
from hermes.plugins.compat.names import unsupported
from hermes.tools.base import ToolSpec

__getattr__ = unsupported("agent.memory_provider")
EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


class MemoryProvider(ExternalProvider, ABC):
    """hermes-agent's memory provider base (see the module docstring)."""

    hermes_home: Path | None = None
    """The plugin's profile home (``bind``), given to ``initialize`` as ``hermes_home``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("initialize")
        if own is not None:
            cls.initialize = _with_session(own)  # type: ignore[method-assign]

    @property
    @abstractmethod
    def name(self) -> str:  # type: ignore[override]
        """The provider's name (``memory.providers`` names it ``plugin:<name>``)."""

    @abstractmethod
    def is_available(self) -> bool: ...

    @abstractmethod
    def initialize(self, session_id: str = "", **kwargs: Any) -> None: ...

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]: ...

    def system_prompt_block(self) -> str:
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Never called here (recall happens in ``prefetch``)."""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Learn from one completed turn."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        raise NotImplementedError(f"memory provider {self.name} does not handle {tool_name}")

    def shutdown(self) -> None:
        """Flush and close at the end of a session."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        return []

    def backup_paths(self) -> list[str]:
        return []

    # -- Hermes' calls ------------------------------------------------------------------

    def system_block(self) -> str:
        return self.system_prompt_block()

    def sync(self, user_text: str, answer: str) -> None:
        self.sync_turn(user_text, answer)

    def tool_specs(self) -> list[ToolSpec]:
        return [ToolSpec(schema["name"], "memory", str(schema.get("description") or ""),
                         dict(schema.get("parameters") or EMPTY_PARAMETERS),
                         functools.partial(self._run_tool, schema["name"]))
                for schema in self.get_tool_schemas()]

    def _run_tool(self, tool_name: str, args: dict[str, Any], **_: Any) -> str:
        return str(self.handle_tool_call(tool_name, args))


def _with_session(initialize: Callable[..., None]) -> Callable[..., None]:
    """``initialize`` callable as Hermes calls it (no arguments) and as hermes-agent does."""
    @functools.wraps(initialize)
    def called(self: MemoryProvider, session_id: str = "", **kwargs: Any) -> None:
        if self.hermes_home is not None:
            kwargs.setdefault("hermes_home", str(self.hermes_home))
        kwargs.setdefault("platform", "cli")
        initialize(self, session_id, **kwargs)

    return called


def bind(home: Path | None) -> dict[str, Any]:
    """The plugin's ``MemoryProvider``, whose ``initialize`` is given ``home``."""
    return {"MemoryProvider": type("MemoryProvider", (MemoryProvider,),
                                   {"hermes_home": home, "__module__": __name__})}
