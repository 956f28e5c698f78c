"""Hook points of the agent loop, per runtime (plugins and tests register here).

A pre-model hook may return text; it is appended to the user's message for
that turn, never to the system prompt (which must stay cache-stable). Plugins'
and shell hooks' callbacks subscribe to named events on ``events``
(``hermes.agent.events``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes.agent.events import HookBus

if TYPE_CHECKING:
    from hermes.memory.base import MemoryProvider

PreModel = Callable[[str], str | None]
"""Receives the user's text; may return context to append to it."""
PostModel = Callable[[Any], None]
"""Receives the ``ModelReply``."""
PreTool = Callable[[str, str], None]
"""Receives the tool name and raw arguments."""
PostTool = Callable[[str, Any], None]
"""Receives the tool name and the ``ToolResult``."""
SessionHook = Callable[[str], None]
"""Receives the session id."""
TurnEnd = Callable[[str, str], None]
"""Receives the user's text and the final answer of a completed turn."""
OverflowHook = Callable[[list[dict[str, Any]]], list[dict[str, Any]] | None]
"""Receives the transcript when the model says it no longer fits; may return a
shorter one (context compression) to retry with, or None."""


@dataclass
class Hooks:
    """Callables run at each hook point, in registration order."""

    pre_model: list[PreModel] = field(default_factory=list)
    post_model: list[PostModel] = field(default_factory=list)
    pre_tool: list[PreTool] = field(default_factory=list)
    post_tool: list[PostTool] = field(default_factory=list)
    session_start: list[SessionHook] = field(default_factory=list)
    session_end: list[SessionHook] = field(default_factory=list)
    turn_end: list[TurnEnd] = field(default_factory=list)
    context_overflow: list[OverflowHook] = field(default_factory=list)
    events: HookBus = field(default_factory=HookBus)
    """Named events (``pre_tool_call``, ``pre_llm_call``, ...) plugins subscribe to."""

    def turn_context(self, user_text: str, **event: Any) -> str:
        """Context from every pre-model hook, then the ``pre_llm_call`` callbacks (given
        ``event`` as keyword arguments), joined, to append to the user message."""
        parts = [hook(user_text) for hook in self.pre_model]
        if self.events.has("pre_llm_call"):
            parts.append(self.events.turn_context(user_message=user_text, **event))
        return "\n\n".join(p for p in parts if p)


def build_hooks(memory: MemoryProvider, events: HookBus | None = None) -> Hooks:
    """A runtime's hooks, with its memory service wired in: ``prefetch`` before the
    model, ``sync`` after a completed turn, ``shutdown`` at session end; ``events``
    holds the plugins' callbacks."""
    hooks = Hooks(events=events or HookBus())
    hooks.pre_model.append(memory.prefetch)
    hooks.turn_end.append(memory.sync)
    hooks.session_end.append(lambda _session_id: memory.shutdown())
    return hooks
