"""hermes-agent's ``agent.context_engine``: the ``ContextEngine`` interface, so a plugin
defining one imports. Hermes compacts a conversation itself (``hermes.agent.compress``);
registering an engine is not supported yet (the plugin's context says so)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("agent.context_engine")


class ContextEngine(ABC):
    """hermes-agent's context engine interface (token state and compaction)."""

    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 6

    @property
    @abstractmethod
    def name(self) -> str: ...

    @abstractmethod
    def update_from_response(self, usage: dict[str, Any]) -> None: ...

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool: ...

    @abstractmethod
    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False,
                 memory_context: str = "") -> list[dict[str, Any]]: ...

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        """A session starts."""

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """A session ends."""

    def on_session_reset(self) -> None:
        """``/new``: the token state starts again."""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        raise NotImplementedError(f"context engine {self.name} has no tool {name}")

    def get_status(self) -> dict[str, Any]:
        return {"name": self.name, "last_prompt_tokens": self.last_prompt_tokens,
                "threshold_tokens": self.threshold_tokens,
                "compression_count": self.compression_count}
