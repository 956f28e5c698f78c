"""``Conversations``: the one path every front door runs a session through.

Chat, one-shots, every gateway platform, the API server, cron, ACP, ``mcp serve``, A/B
cells, delegation and the learning review open a conversation here, run its turns here
and end it here; a front door only adapts its protocol. So the rules are written once:

- **ids**: ``open(session=ID)`` resumes the session of that exact id, else starts one
  with it (a chat's or an API client's own id); ``open(resume=ID)`` resumes the one
  session whose id is or starts with ``ID``, and refuses when there is none;
  ``open(resume=LATEST)`` the newest. A new session without an id gets a fresh one.
- **turns** run on the caller's thread; ``interrupt()`` (any thread) stops one, a
  ``deadline`` stops it the same way, and each running turn is counted once
  (``running``), so a shutdown interrupts every one of them (``interrupt_all``) and a
  chat's ``/stop`` the one of its session (``interrupt_session``).
- **slots**: with ``max_turns`` set, ``slot()`` refuses a turn past it at once
  (``Busy``) and every turn once ``drain()`` was called (``Draining``).
- **pre-checks**: a runtime whose provider lacks its key refuses ``open`` with one line
  (``MissingKey``) before a session exists (``hermes.container.open_runtime``).
- **ending**: ``end()`` closes the session for now and, unless told to keep it,
  deletes it when the model never answered in it and it cost nothing (an unreachable
  endpoint, a bad key, a chat left without a word): there is nothing to resume.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from hermes.agent.attachments import Attachment, ImageRefused, VisionLimits, check_count
from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import Agent, TurnResult
from hermes.agent.prechecks import MissingKey
from hermes.agent.seeing import (
    Described,
    EarlierImagesRefused,
    for_model,
    history_for_model,
)
from hermes.agent.transcript import discard_if_unanswered
from hermes.config.schema import VisionConfig
from hermes.errors import UserError
from hermes.models.base import ModelClient
from hermes.models.types import Usage
from hermes.sessions.errors import SessionNotFound

DESCRIBED_SESSIONS: Final = 64
"""Sessions whose earlier images' descriptions a runtime keeps (``Conversations.described``)."""
LATEST: Final = "latest"
"""``open(resume=LATEST)``: the newest session (``--continue``)."""


class Busy(Exception):
    """Every turn slot is taken."""


class Draining(Exception):
    """The runtime is shutting down and takes no new turns."""


MODEL_NAME = re.compile(r"[\w.:/@+-]{1,200}")
"""What ``/model NAME`` takes: a model id as providers spell them (``gpt-4o``,
``anthropic/claude-sonnet-4-5``, ``accounts/fireworks/models/x``, ``llama3.1:8b``)."""


def model_name_problem(name: str) -> str | None:
    """Why ``name`` is no model name (one line), else None: the one rule of every door."""
    if MODEL_NAME.fullmatch(name):
        return None
    return "not a model name: letters, digits and . : / @ + - _ only, 200 at most"


@dataclass(frozen=True)
class Ended:
    """How a conversation ended."""

    session_id: str
    kept: bool
    """False when the session was discarded: the model never answered in it."""


class Conversation:
    """One open session: its turns, an interrupt, its end. ``owner`` None: a conversation
    no runtime counts among its running turns — a sub-agent's (``delegate_task``), whose
    parent's turn is the one counted and interrupted."""

    def __init__(self, owner: Conversations | None, agent: Agent):
        self._owner = owner
        self.agent = agent
        self._ended = False
        self.attached: list[Attachment] = []
        """Images attached for the next turn (``/image``), sent with it by ``run``."""

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    def run(self, text: str, *, deadline: float | None = None,
            images: Sequence[Attachment] = ()) -> TurnResult:
        """One turn (blocking); stopped by ``interrupt()`` or after ``deadline``
        seconds, with the transcript kept valid. ``images``: what the user attached
        (``hermes.agent.attachments``), checked against ``vision.max_images`` here."""
        images, self.attached = [*self.attached, *images], []
        self._see_earlier()
        if images:  # a model without vision gets vision.model's description instead
            check_count(images, self.vision_limits())
            text, images = for_model(self.agent.model, self.vision, text, images,
                                     spent=self.spent)
        timer = threading.Timer(deadline, self.agent.interrupt) if deadline else None
        self.agent.interrupted.clear()  # then counted: an interrupt from here on is seen
        counted = self._owner.running_turn(self) if self._owner else contextlib.nullcontext()
        with counted:
            if timer is not None:
                timer.daemon = True
                timer.start()
            try:
                return self.agent.run_turn(text, clear_interrupt=False, images=images)
            finally:
                if timer is not None:
                    timer.cancel()

    def _see_earlier(self) -> None:
        """Earlier images of a session now on a model without vision (``/model``, a
        changed ``provider.model``): described by ``vision.model`` from here on, or the
        turn refused in one line."""
        described = self._owner.described(self.session_id) if self._owner else None
        try:
            self.agent.messages = history_for_model(self.agent.model, self.vision,
                                                    self.agent.messages, self.spent, described)
        except EarlierImagesRefused as exc:
            raise ImageRefused(f"earlier message {exc.index} of this session: "
                               f"{exc.reason}") from exc

    def spent(self, usage: Usage) -> None:
        """A model call of this conversation that wrote no message (vision.model's)."""
        self.agent.store.add_usage(self.session_id, usage)

    def attach(self, image: Attachment) -> Attachment:
        """Attach ``image`` to the next turn; refused past ``vision.max_images``."""
        check_count([*self.attached, image], self.vision_limits())
        self.attached.append(image)
        return image

    @property
    def vision(self) -> VisionConfig:
        """The ``vision`` settings of this conversation's runtime."""
        return self._owner.factory.deps.vision if self._owner else VisionConfig()

    def vision_limits(self) -> VisionLimits:
        """What an image on this conversation's turns may be (``vision.*``)."""
        return VisionLimits.from_config(self.vision)

    def switch_model(self, name: str) -> bool:
        """Ask model ``name`` for the rest of this session (``/model NAME``): this
        conversation and, resumed in the same runtime, its later ones; whether the
        client could switch. New sessions keep the profile's model."""
        if model_name_problem(name) is not None:
            return False
        client = self.agent.model.with_model(name)
        if client is None:
            return False
        self.agent.model = client
        if self._owner is not None:
            self._owner.session_models[self.session_id] = name
        return True

    def interrupt(self) -> None:
        """Stop the running turn, if any (from any thread)."""
        self.agent.interrupt()

    def end(self, *, keep: bool = False) -> Ended:
        """Close the session for now; delete it if the model never answered in it
        (unless ``keep``). A second call changes nothing."""
        if self._ended:
            return Ended(self.session_id, True)
        self._ended = True
        self.agent.close()
        discarded = not keep and discard_if_unanswered(self.agent)
        return Ended(self.session_id, not discarded)

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.end()


class Conversations:
    """Open, run, count and end one runtime's conversations."""

    def __init__(self, factory: AgentFactory, *, max_turns: int | None = None,
                 refusal: str | None = None):
        self.factory = factory
        self.refusal = refusal
        """Why no conversation can start (a provider without its key): ``open`` refuses
        with it (``MissingKey``) before a session exists."""
        self.max_turns = max_turns
        """Turns at once (``slot()``); None: no limit."""
        self._running: set[Conversation] = set()
        self._reserved = 0
        self._draining = False
        self._lock = threading.Lock()
        self.session_models: dict[str, str] = {}
        """The model a session switched to with ``/model``, by session id (kept while
        this runtime lives)."""
        self._described: dict[str, Described] = {}
        """Descriptions of a session's earlier images for a model without vision, by
        session id: a session resumed per request is not described again each time
        (the latest ``DESCRIBED_SESSIONS`` sessions; never shared: each describing call
        saw its session's question)."""

    # -- opening -----------------------------------------------------------------------

    def open(self, how: Interaction, *, session: str | None = None,
             resume: str | None = None, history: Sequence[dict[str, Any]] = (),
             instructions: str | None = None) -> Conversation:
        """A conversation: ``resume`` an existing session (an id, a unique prefix or
        ``LATEST``: refused when there is none), or the one with id ``session`` (new
        with that id if it does not exist), else a new one. ``history`` and
        ``instructions`` (a client's system message) shape a new session only; the
        images of ``history`` reach a model without vision described by
        ``vision.model`` (``EarlierImagesRefused`` before anything is stored when there
        is none)."""
        if self.refusal is not None:
            raise MissingKey(self.refusal)
        if resume is not None:
            return self._on_its_model(self.factory.resume(self._resolve(resume), how))
        if session is not None and self._exists(session):
            return self._on_its_model(self.factory.resume(session, how))
        spent: list[Usage] = []
        history = history_for_model(self._model_of(session), self.factory.deps.vision,
                                    history, spent.append)
        conversation = self._on_its_model(self.factory.new_session(
            how, session_id=session, history=history, instructions=instructions))
        for usage in spent:
            conversation.spent(usage)
        return conversation

    def described(self, session_id: str) -> Described:
        """The descriptions kept for ``session_id``'s earlier images (``_described``)."""
        with self._lock:
            kept = self._described.pop(session_id, None)
            kept = self._described[session_id] = {} if kept is None else kept
            while len(self._described) > DESCRIBED_SESSIONS:
                self._described.pop(next(iter(self._described)))
        return kept

    def _model_of(self, session: str | None) -> ModelClient:
        """The model a new session ``session`` will ask (``/model`` may have picked it)."""
        model = self.factory.deps.model
        name = self.session_models.get(session or "")
        return (model.with_model(name) or model) if name else model

    def _on_its_model(self, agent: Agent) -> Conversation:
        """The session's conversation, on the model it switched to (``/model``), if any."""
        conversation = Conversation(self, agent)
        name = self.session_models.get(agent.session_id)
        if name is not None:
            conversation.switch_model(name)
        return conversation

    def _resolve(self, resume: str) -> str:
        sessions = self.factory.deps.sessions
        if resume == LATEST:
            latest = self.factory.latest_session_id()
            if latest is None:
                raise UserError("no session to continue yet; start one with `hermes chat`")
            return latest
        try:
            return str(sessions.resolve_id(resume))
        except LookupError as exc:
            raise UserError(str(exc)) from exc

    def _exists(self, session_id: str) -> bool:
        try:
            self.factory.deps.sessions.get_session(session_id)
        except SessionNotFound:
            return False
        return True

    # -- running turns -----------------------------------------------------------------

    @property
    def running(self) -> int:
        """Turns running now, each counted once."""
        with self._lock:
            return len(self._running)

    @property
    def draining(self) -> bool:
        return self._draining

    @contextmanager
    def running_turn(self, conversation: Conversation) -> Iterator[None]:
        with self._lock:
            self._running.add(conversation)
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(conversation)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """A turn slot, or ``Busy`` at once when ``max_turns`` are taken (``Draining``
        after ``drain()``)."""
        with self._lock:
            if self._draining:
                raise Draining("shutting down")
            if self.max_turns is not None and self._reserved >= self.max_turns:
                turns = "turn" if self.max_turns == 1 else "turns"
                raise Busy(f"running {self.max_turns} {turns}")
            self._reserved += 1
        try:
            yield
        finally:
            with self._lock:
                self._reserved -= 1

    def drain(self) -> None:
        """Take no new turns (``slot()`` refuses); running ones go on."""
        with self._lock:
            self._draining = True

    def interrupt_all(self) -> int:
        """Interrupt every running turn (their transcripts stay valid); how many."""
        with self._lock:
            running = list(self._running)
        for conversation in running:
            conversation.interrupt()
        return len(running)

    def interrupt_session(self, session_id: str) -> bool:
        """Interrupt the running turn of session ``session_id`` (a chat's ``/stop``);
        False when none of its turns runs."""
        with self._lock:
            running = [c for c in self._running if c.session_id == session_id]
        for conversation in running:
            conversation.interrupt()
        return bool(running)
