"""The model client interface the agent talks to."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class ModelClient(ABC):
    """Sends a conversation to a model and returns its reply message."""

    model: str

    @abstractmethod
    def complete(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        """One model call; returns the assistant message as a plain dict."""
