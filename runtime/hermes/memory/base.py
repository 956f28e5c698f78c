"""Memory providers: what the agent remembers across sessions."""

from __future__ import annotations


class MemoryProvider:
    """Base: a provider that remembers nothing. Subclasses override what they support."""

    name = "none"

    def snapshot(self) -> str:
        """Text frozen into the system prompt at session start."""
        return ""
