"""When a session's next background review is due: its nudge counters.

Two counts per session. User turns since the last memory write: a turn in which the
agent wrote memory ends at 0, any other turn adds one; at ``memory_every``
(``learning.memory_nudge_turns``) the memory pass is due. Tool iterations (model
calls that used tools) since the last skill write: at ``skills_every``
(``learning.skill_nudge_iterations``) the skill pass is due. Starting a review
resets the counts of the passes it runs.

A session resumed in another process (``hermes -z --continue``, the gateway opening
a chat's session for each message) gets its counts back from its transcript, modulo
the interval: the reviews that ran before are not in the transcript, and the modulo
puts the next one where an uninterrupted process would have.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes.agent.dispatch import CallOutcome
from hermes.agent.loop import GRACE_NOTE
from hermes.tools.results import is_error

Pass = Literal["memory", "skills"]
MEMORY_WRITER = "memory"
SKILL_WRITER = "skill_manage"


@dataclass(frozen=True)
class Due:
    """Which passes a review should run now."""

    memory: bool = False
    skills: bool = False

    @property
    def passes(self) -> tuple[Pass, ...]:
        chosen: list[Pass] = []
        if self.memory:
            chosen.append("memory")
        if self.skills:
            chosen.append("skills")
        return tuple(chosen)


@dataclass
class NudgeCounter:
    """The counts of one session (see the module docstring)."""

    memory_every: int
    """User turns without a memory write after which the memory pass is due; 0: never."""
    skills_every: int
    """Tool iterations without a skill write after which the skill pass is due; 0: never."""
    turns_since_memory: int = 0
    iterations_since_skill: int = 0
    _wrote_memory: bool = field(default=False, repr=False)

    @classmethod
    def from_history(cls, messages: Iterable[Mapping[str, Any]], memory_every: int,
                     skills_every: int) -> NudgeCounter:
        """The counts of a stored transcript, modulo the intervals."""
        counter = cls(memory_every, skills_every)
        for message in messages:
            counter._replay(message)
        if memory_every:
            counter.turns_since_memory %= memory_every
        if skills_every:
            counter.iterations_since_skill %= skills_every
        return counter

    def _replay(self, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        if role == "user" and message.get("content") != GRACE_NOTE:
            self.turns_since_memory += 1
        elif role == "assistant" and message.get("tool_calls"):
            self.iterations_since_skill += 1
        elif role == "tool" and not is_error(str(message.get("content") or "")):
            if message.get("name") == MEMORY_WRITER:
                self.turns_since_memory = 0
            elif message.get("name") == SKILL_WRITER:
                self.iterations_since_skill = 0

    def tools_ran(self, outcomes: Sequence[CallOutcome]) -> None:
        """Count one tool iteration; a successful skill write starts the count again, a
        memory write marks the turn."""
        self.iterations_since_skill += 1
        for outcome in outcomes:
            if outcome.is_error:
                continue
            if outcome.call.name == SKILL_WRITER:
                self.iterations_since_skill = 0
            elif outcome.call.name == MEMORY_WRITER:
                self._wrote_memory = True

    def turn_ended(self) -> Due:
        """Count the turn; which passes are due now."""
        self.turns_since_memory = 0 if self._wrote_memory else self.turns_since_memory + 1
        self._wrote_memory = False
        return Due(memory=0 < self.memory_every <= self.turns_since_memory,
                   skills=0 < self.skills_every <= self.iterations_since_skill)

    def started(self, due: Due) -> None:
        """A review of ``due``'s passes started: their counts begin again."""
        if due.memory:
            self.turns_since_memory = 0
        if due.skills:
            self.iterations_since_skill = 0
