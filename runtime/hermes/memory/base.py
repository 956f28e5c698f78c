"""Memory: what the agent remembers across sessions.

Two small base classes:

- ``MemoryProvider`` is the memory *service* the runtime talks to (the
  container's ``memory``). The base itself is the ``none`` backend: it
  remembers nothing, offers no tools and recalls nothing.
- ``ExternalProvider`` is one external memory backend that runs alongside
  the service (``memory.providers: [factstore]``): the service checks its
  availability, initialises it, offers its tools, fans prefetches out to it
  before each turn, syncs it after each turn and shuts it down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes.tools.base import ToolSpec

if TYPE_CHECKING:
    from hermes.events import HookBus


class MemoryProvider:
    """The memory service interface; as is, the no-op ``none`` backend.

    The agent factory calls ``snapshot()`` once per new session and ``subscribe``s the
    service to the session's event bus: ``prefetch`` before each model turn
    (``pre_llm_call``), ``sync`` after each completed turn (``post_llm_call``) and
    ``shutdown`` when the session ends (``on_session_end``); the container registers
    ``tool_specs()`` in the runtime's tool registry.
    """

    name = "none"

    def subscribe(self, bus: HookBus) -> None:
        """Recall, sync and shut down on ``bus``'s events (inline: the service bounds
        its providers itself, with the bus's ``gather``)."""
        def recall(user_message: str, **_: Any) -> str:
            return self.prefetch(user_message)

        def sync(user_message: str, assistant_response: str, **_: Any) -> None:
            self.sync(user_message, assistant_response)

        bus.subscribe("pre_llm_call", recall, "memory", inline=True)
        bus.subscribe("post_llm_call", sync, "memory", inline=True)
        bus.subscribe("on_session_end", lambda **_: self.shutdown(), "memory", inline=True)

    def snapshot(self) -> str:
        """Memory text for a session starting now, frozen into its system prompt.

        Writes made during that session change the files only; the next
        session's ``snapshot()`` sees them.
        """
        return ""

    def system_blocks(self) -> list[str]:
        """Static provider descriptions for the system prompt (stable per session)."""
        return []

    def prefetch(self, user_text: str) -> str:
        """Context recalled for this turn, appended to the user's message; may be ''."""
        return ""

    def sync(self, user_text: str, answer: str) -> None:
        """Called after a completed turn with the user's text and the final answer."""

    def shutdown(self) -> None:
        """Called when a session ends; the service stays usable for later sessions."""

    def tool_specs(self) -> list[ToolSpec]:
        """Tools the service contributes to the runtime's registry."""
        return []


class ExternalProvider:
    """One external memory backend; subclasses override what they support.

    Lifecycle: ``is_available()`` then ``initialize()`` once, before first use
    (a provider that is unavailable or fails to initialise is skipped with a
    logged warning). ``prefetch`` runs in a worker thread under a timeout and
    may run concurrently with tool calls, so providers must be thread-safe.
    ``shutdown()`` is called at the end of every session: release what can be
    reopened, and stay usable afterwards.
    """

    name = "external"
    """Names the provider in config (``memory.providers``) and in recall fences."""

    def is_available(self) -> bool:
        """Whether the provider can run here (libraries, credentials, features)."""
        return True

    def initialize(self) -> None:
        """Prepare storage or connections; called once before first use."""

    def system_block(self) -> str:
        """A static description for the system prompt, or '' for none."""
        return ""

    def tool_specs(self) -> list[ToolSpec]:
        """Tools the provider offers the model."""
        return []

    def prefetch(self, user_text: str) -> str:
        """What the provider recalls for ``user_text`` (plain text, unfenced), or ''."""
        return ""

    def sync(self, user_text: str, answer: str) -> None:
        """Learn from a completed turn (runs in the background)."""

    def shutdown(self) -> None:
        """Flush and release resources at the end of a session."""
