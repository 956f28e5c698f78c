"""The model client interface the agent talks to."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from hermes.models.types import ModelReply, StreamCallbacks


class ModelClient(ABC):
    """Sends a conversation (OpenAI-style messages) to a model; returns its reply."""

    model: str

    @abstractmethod
    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 *, stream: bool = False, callbacks: StreamCallbacks | None = None,
                 **params: Any) -> ModelReply:
        """One model turn."""

    def takes_images(self) -> bool:
        """Whether the model reads image parts of messages (else they are described
        for it by ``vision.model``, or refused)."""
        return True

    def needs_litellm(self) -> bool:
        """Whether its calls may go through litellm (a long-running process imports it
        ahead of the first call)."""
        return True

    def model_names(self) -> list[str]:
        """The names the model may be known by in litellm's model data, first first."""
        return [self.model]

    def input_window(self) -> int | None:
        """The model's input window in tokens as litellm's model info says (its bundled
        map, never the network); None when it does not know the model."""
        from hermes.models.litellm_client import import_litellm  # litellm loads lazily

        litellm = import_litellm()
        for name in self.model_names():
            try:
                info = litellm.get_model_info(name)
            except Exception:  # noqa: BLE001 - litellm raises for models it has not mapped
                continue
            window = info.get("max_input_tokens") or info.get("max_tokens")
            if isinstance(window, int) and window > 0:
                return window
        return None

    def with_model(self, name: str) -> ModelClient | None:
        """The same client asking for model ``name`` instead (``/model NAME``); None
        when this client cannot switch models."""
        return None
