"""``TurnObserver``: what watches one session's turns from inside the agent loop.

Hooks (``hooks.py``) belong to the runtime and see text only; an observer belongs to
one agent and sees its tool iterations and how each turn ended. The learning loop's
nudge counters are one (``hermes.learning.nudges``). The base class does nothing.
Observers run on the turn's thread and must return at once: anything slow (a
background review) is started elsewhere, never waited for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes.agent.dispatch import CallOutcome

if TYPE_CHECKING:
    from hermes.agent.loop import Agent, TurnResult


class TurnObserver:
    """Watches one agent's turns; override what you need."""

    def tools_ran(self, outcomes: Sequence[CallOutcome]) -> None:
        """One tool iteration is over: the model asked for tools and they ran."""

    def turn_ended(self, agent: Agent, result: TurnResult) -> None:
        """A turn ended (any exit reason) and its messages are persisted."""
