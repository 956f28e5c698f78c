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

    def input_window(self) -> int | None:
        """The model's input window in tokens as litellm's bundled model data says (read
        without litellm); None when it does not know the model."""
        from hermes.models import model_data

        return model_data.input_window(model_data.model_entry([self.model]))

    def with_model(self, name: str) -> ModelClient | None:
        """The same client asking for model ``name`` instead (``/model NAME``); None
        when this client cannot switch models."""
        return None
