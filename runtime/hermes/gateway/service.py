"""One profile inside the gateway: its runtime, its running turns, its turn slots.

Turns run in worker threads (the agent loop is synchronous); the service counts
them against ``max_concurrency``, remembers which agents are mid-turn so a
shutdown can interrupt them, and refuses new turns once it is draining.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import Agent, TurnResult
from hermes.gateway.delivery import Deliveries
from hermes.home import Home
from hermes.sessions.errors import SessionNotFound
from hermes.skills.commands import SkillTurn, skill_turn


class Busy(Exception):
    """Every turn slot of the profile is taken."""


class Draining(Exception):
    """The gateway is shutting down and takes no new turns."""


class ProfileService:
    """What platforms of one profile use to run the agent."""

    def __init__(self, home: Home, runtime: Any, log: logging.Logger, max_concurrency: int = 8):
        self.home = home
        self.runtime = runtime
        self.log = log
        self.factory: AgentFactory = runtime.container.agent_factory()
        self.max_concurrency = max_concurrency
        self.draining = False
        self.deliveries = Deliveries()
        """The profile's running adapters: where answers to other chats are sent."""
        self._reserved = 0
        self._running: set[Agent] = set()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.home.name

    @property
    def model(self) -> str:
        return str(self.runtime.settings.provider.model)

    @property
    def active_turns(self) -> int:
        with self._lock:
            return len(self._running)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """A turn slot, or ``Busy`` at once when all are taken (``Draining`` after stop)."""
        with self._lock:
            if self.draining:
                raise Draining(f"profile {self.name} is shutting down")
            if self._reserved >= self.max_concurrency:
                turns = "turn" if self.max_concurrency == 1 else "turns"
                raise Busy(f"profile {self.name} is running {self.max_concurrency} {turns} "
                           "(platforms.enabled.<name>.settings.max_concurrency)")
            self._reserved += 1
        try:
            yield
        finally:
            with self._lock:
                self._reserved -= 1

    def open(self, how: Interaction, session_id: str | None = None,
             history: Sequence[dict[str, Any]] = (), instructions: str | None = None) -> Agent:
        """The agent of ``session_id`` (resumed if it exists), else of a new session."""
        sessions = self.factory.deps.sessions
        if session_id is not None and _exists(sessions, session_id):
            return self.factory.resume(session_id, how)
        return self.factory.new_session(how, session_id=session_id, history=history,
                                        instructions=instructions)

    @property
    def events(self) -> Any:
        """The profile's hook events (plugins' and shell hooks' callbacks)."""
        return self.runtime.container.hooks().events

    def plugin_commands(self) -> dict[str, Any]:
        """Enabled plugins' slash commands, by name."""
        return dict(self.runtime.container.plugins().registrations().commands)

    def run_plugin_command(self, name: str, argument: str, how: Interaction,
                           session_id: str | None) -> str:
        """Plugin command ``/name`` in the chat's session (its ``dispatch_tool`` calls ask
        for approval there); blocking: call it from a worker thread."""
        agent = self.open(how, session_id)
        try:
            return str(self.runtime.container.plugins().run_command(name, argument, agent))
        finally:
            agent.close()

    def skill_turn(self, text: str) -> SkillTurn | None:
        """``/<skill> [request]`` as the turn that carries the skill, else None."""
        return skill_turn(self.runtime.container.skills(), text)

    def expand(self, text: str) -> str:
        """The text a turn runs: a skill command expanded, anything else as it is."""
        turn = self.skill_turn(text)
        return turn.message if turn is not None else text

    def run(self, agent: Agent, text: str) -> TurnResult:
        """One turn, blocking (call it from a worker thread)."""
        with self._lock:
            self._running.add(agent)
        try:
            result = agent.run_turn(text)
        finally:
            with self._lock:
                self._running.discard(agent)
        self.log.info("turn", extra={"fields": {
            "profile": self.name, "session": agent.session_id, "exit": result.exit_reason,
            "iterations": result.iterations, "error": result.error}})
        return result

    def interrupt_all(self) -> int:
        """Interrupt every running turn (their transcripts stay valid); how many."""
        with self._lock:
            running = list(self._running)
        for agent in running:
            agent.interrupt()
        return len(running)


def _exists(sessions: Any, session_id: str) -> bool:
    try:
        sessions.get_session(session_id)
    except SessionNotFound:
        return False
    return True
