"""One profile inside the gateway: its runtime and its conversations.

Turns run in worker threads (the agent loop is synchronous) through the runtime's one
``Conversations`` (``hermes.agent.conversations``): it counts them once (``active_turns``,
``gateway.json``), holds the turn slots of ``max_concurrency``, refuses new turns once
draining, and a shutdown interrupts each running turn once. This service only names the
profile in those refusals and logs each turn.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from hermes.agent.attachments import Attachment
from hermes.agent.conversations import (
    Busy,
    Conversation,
    Conversations,
    Draining,
    model_name_problem,
)
from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import TurnResult
from hermes.gateway.delivery import Deliveries
from hermes.home import Home
from hermes.skills.commands import SkillTurn, skill_turn

__all__ = ["Busy", "Draining", "ProfileService"]


class ProfileService:
    """What platforms of one profile use to run the agent."""

    def __init__(self, home: Home, runtime: Any, log: logging.Logger, max_concurrency: int = 8):
        self.home = home
        self.runtime = runtime
        self.log = log
        self.factory: AgentFactory = runtime.container.agent_factory()
        self.conversations: Conversations = runtime.container.conversations()
        self.max_concurrency = max_concurrency
        self.deliveries = Deliveries()
        """The profile's running adapters: where answers to other chats are sent."""

    @property
    def name(self) -> str:
        return self.home.name

    @property
    def model(self) -> str:
        return str(self.runtime.settings.provider.model)

    @property
    def max_concurrency(self) -> int | None:
        """Turns of the profile at once (the API server's ``max_concurrency``)."""
        return self.conversations.max_turns

    @max_concurrency.setter
    def max_concurrency(self, turns: int | None) -> None:
        self.conversations.max_turns = turns

    @property
    def active_turns(self) -> int:
        """Turns running now (chats, API requests, webhooks, cron runs), each once."""
        return self.conversations.running

    @property
    def draining(self) -> bool:
        return self.conversations.draining

    def drain(self) -> None:
        """Take no new turns (a shutdown); running ones go on."""
        self.conversations.drain()

    @contextmanager
    def slot(self) -> Iterator[None]:
        """A turn slot, or ``Busy`` at once when all are taken (``Draining`` after stop)."""
        held = ExitStack()
        try:
            held.enter_context(self.conversations.slot())
        except Busy as exc:
            raise Busy(f"profile {self.name} is {exc} "
                       "(platforms.enabled.<name>.settings.max_concurrency)") from exc
        except Draining as exc:
            raise Draining(f"profile {self.name} is {exc}") from exc
        with held:
            yield

    def open(self, how: Interaction, session_id: str | None = None,
             history: Sequence[dict[str, Any]] = (), instructions: str | None = None
             ) -> Conversation:
        """The conversation of ``session_id`` (resumed if it exists), else a new one."""
        return self.conversations.open(how, session=session_id, history=history,
                                       instructions=instructions)

    @property
    def events(self) -> Any:
        """The profile's hook events (plugins' and shell hooks' callbacks)."""
        return self.runtime.container.hooks()

    def plugin_commands(self) -> dict[str, Any]:
        """Enabled plugins' slash commands, by name."""
        return dict(self.runtime.container.plugins().registrations().commands)

    def run_plugin_command(self, name: str, argument: str, how: Interaction,
                           session_id: str | None) -> str:
        """Plugin command ``/name`` in the chat's session (its ``dispatch_tool`` calls ask
        for approval there); blocking: call it from a worker thread."""
        with self.open(how, session_id) as conversation:
            return str(self.runtime.container.plugins().run_command(name, argument,
                                                                    conversation.agent))

    def model_command(self, session_id: str | None, name: str) -> str:
        """``/model [NAME]`` for the session ``session_id``: its model, or NAME for the
        rest of it (later sessions keep the profile's; None: no session yet, the caller
        keeps NAME for it)."""
        models = self.conversations.session_models
        if not name:
            return f"model: {models.get(session_id or '', self.model)}"
        problem = model_name_problem(name)
        if problem is not None:
            return problem
        if session_id is not None:
            models[session_id] = name
        return f"model for this conversation: {name} (new ones use {self.model})"

    def skill_turn(self, text: str) -> SkillTurn | None:
        """``/<skill> [request]`` as the turn that carries the skill, else None."""
        return skill_turn(self.runtime.container.skills(), text)

    def expand(self, text: str) -> str:
        """The text a turn runs: a skill command expanded, anything else as it is."""
        turn = self.skill_turn(text)
        return turn.message if turn is not None else text

    def run(self, conversation: Conversation, text: str,
            images: Sequence[Attachment] = ()) -> TurnResult:
        """One turn, blocking (call it from a worker thread); logged. ``images``: the
        user's, checked (``hermes.agent.attachments``)."""
        result = conversation.run(text, images=images)
        self.log.info("turn", extra={"fields": {
            "profile": self.name, "session": conversation.session_id,
            "exit": result.exit_reason, "iterations": result.iterations,
            "error": result.error}})
        return result

    def run_to_end(self, conversation: Conversation, text: str,
                   images: Sequence[Attachment] = ()) -> TurnResult:
        """One turn, then the conversation ended (a session the model never answered is
        discarded) in the same worker thread: also when the caller went away meanwhile."""
        try:
            return self.run(conversation, text, images)
        finally:
            conversation.end()

    def interrupt_all(self) -> int:
        """Interrupt every running turn once (their transcripts stay valid); how many."""
        return self.conversations.interrupt_all()
