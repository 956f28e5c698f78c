"""Messages from chat platforms to sessions: one session per chat (or thread).

A message for a chat whose turn is still running waits in that chat's queue and
runs next, in order. Slash commands work from any platform: the gateway's entries
of the one table (``hermes.agent.commands``: ``/new``, ``/model``, ``/usage``,
``/stop``, ``/help``, ...) are bound to the methods here; any other
``/<name> [request]`` runs an enabled plugin's command of that name, or names a
skill and runs as a turn carrying it. Plugins' ``pre_gateway_dispatch`` hooks see each
message first and may drop or rewrite it.

A message's images (``hermes.gateway.images``) are downloaded here, once the gate let its
sender in, and go to the model with its text as one turn; one that cannot be attached
is answered with one line and runs no turn. Voice messages are transcribed before the
turn and answers spoken after it as ``/voice`` says (``hermes.gateway.voice``).

A dangerous command asks in the chat (``hermes.gateway.messaging.approvals``):
``/approve`` and ``/deny`` answer it at once, even while the turn runs. The chat is
shown a typing indicator while a turn runs (where the platform has one).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hermes.agent.attachments import Attachment, ImageRefused, VisionLimits
from hermes.agent.commands import Bound, bind, help_rows, parse, route, usage_line
from hermes.agent.conversations import Conversation
from hermes.agent.factory import Interaction
from hermes.events import HookFailed
from hermes.fsutil import atomic_write
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.images import fetch_images
from hermes.gateway.messaging.approvals import ChatApprovals
from hermes.gateway.messaging.learned import LearnedLines
from hermes.gateway.service import ProfileService
from hermes.gateway.voice import ChatVoice
from hermes.identities import IdentityStore, chat_link

TYPING_EVERY = 4.0
"""Seconds between typing indicators during a turn (Telegram's lasts 5 s)."""
SESSIONS_FILE = "gateway_sessions.json"


class SessionRouter:
    def __init__(self, service: ProfileService):
        self.service = service
        self.adapters = service.deliveries.adapters
        """The running adapters by platform name (shared with webhook and cron delivery)."""
        self.approvals = ChatApprovals(self._reply, service.runtime.settings.approvals
                                       .chat_timeout, service.log)
        self._path = service.home.path / SESSIONS_FILE
        self._sessions: dict[str, str] = _load(self._path)
        self._queues: dict[str, deque[MessageEvent]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._next_models: dict[str, str] = {}
        """``/model NAME`` sent before a chat's session exists: its first turn's model."""
        self.learned = LearnedLines(service.runtime.container.learning(), self.adapters,
                                    self._quiet)
        self._vision = VisionLimits.from_config(service.runtime.settings.vision)
        """How much image a message may carry (``vision.*``)."""
        self.voice = ChatVoice(service.runtime.container.voice(), service.home.path, self._reply)
        """Voice messages in, spoken answers out (``stt``, ``tts``, ``/voice``)."""

    @property
    def session_count(self) -> int:
        return len(self._sessions)

    async def handle(self, event: MessageEvent) -> None:
        """Take one message (called by adapters); answers arrive through ``send``."""
        dispatched = await self._dispatch_hooks(event)
        if dispatched is None:
            return
        event = dispatched
        text = event.text.strip()
        if text.startswith("/"):
            name = parse(text)[0]
            found = route(name, "gateway", self.service.plugin_commands())
            if found == "plugin":
                await self._reply(event.source, await self._plugin_command(event, name))
                return
            turn = None if found == "builtin" else \
                await asyncio.to_thread(self.service.skill_turn, text)
            if turn is None:
                await self._reply(event.source, self._command(event.source, text))
                return
            event = replace(event, text=turn.message)
        if self.service.draining:
            await self._reply(event.source, "(shutting down — send it again in a moment)")
            return
        key = event.source.session_key
        self._queues.setdefault(key, deque()).append(event)
        worker = self._workers.get(key)
        if worker is None or worker.done():  # else the running worker takes it next
            self._workers[key] = asyncio.create_task(self._work(key))

    async def _work(self, key: str) -> None:
        queue = self._queues[key]
        loop = asyncio.get_running_loop()
        while queue:
            event = queue.popleft()
            if await self.voice.refused(event):
                continue
            try:
                images = await fetch_images(event.images, self._vision)
            except ImageRefused as exc:  # the caption is about the image: nothing runs
                await self._reply(event.source, str(exc))
                continue
            conversation = await asyncio.to_thread(self._open, key, event.source, loop)
            typing = asyncio.create_task(self._typing(event.source))
            try:
                text = await self.voice.hear(event, conversation.session_id)
                answer = "" if text is None else await self._turn(conversation, text, images)
            finally:
                typing.cancel()
                await asyncio.to_thread(self._end, key, conversation)
            await self.voice.answer(self.adapters.get(event.source.platform), event.source,
                                    answer, conversation.session_id)

    async def _turn(self, conversation: Conversation, text: str,
                    images: list[Attachment]) -> str:
        """One turn's answer for the chat."""
        try:
            result = await asyncio.to_thread(self.service.run, conversation, text, images)
        except ImageRefused as exc:  # a model that takes no images, and no vision.model
            return str(exc)
        return result.text or (f"(error: {result.error})" if result.error else
                               "(interrupted)" if result.exit_reason == "interrupted" else "")

    async def _dispatch_hooks(self, event: MessageEvent) -> MessageEvent | None:
        """``pre_gateway_dispatch``: the event to run (perhaps rewritten), or None when a
        hook skips it; a failing hook keeps it from running (fails closed)."""
        if not self.service.events.has("pre_gateway_dispatch"):
            return event
        source = event.source
        try:
            answers = await asyncio.to_thread(
                self.service.events.emit, "pre_gateway_dispatch", platform=source.platform,
                chat_id=source.chat_id, user_id=source.user_id, text=event.text)
        except HookFailed:
            await self._reply(source, "(not processed: a hook of this profile failed)")
            return None
        for answer in answers:
            action = answer.get("action") if isinstance(answer, dict) else None
            if action == "skip":
                return None
            if action == "rewrite" and isinstance(answer.get("text"), str):
                event = replace(event, text=answer["text"])
        return event

    async def _plugin_command(self, event: MessageEvent, name: str) -> str:
        """A plugin's ``/name`` in this chat's session (approvals asked in the chat)."""
        source = event.source
        how = Interaction(source=source.platform, stream=False, interactive=True,
                          approve=self.approvals.callback(source, asyncio.get_running_loop()),
                          origin=source)
        argument = event.text.strip()[len(name) + 1:].strip()
        return await asyncio.to_thread(self.service.run_plugin_command, name, argument, how,
                                       self._sessions.get(source.session_key))

    def _open(self, key: str, source: MessageSource, loop: asyncio.AbstractEventLoop
              ) -> Conversation:
        """The chat's conversation: its session resumed, else a new one remembered."""
        how = Interaction(source=source.platform, stream=False, interactive=True,
                          approve=self.approvals.callback(source, loop), origin=source)
        conversation = self.service.open(how, self._sessions.get(key))
        if key in self._next_models:
            conversation.switch_model(self._next_models.pop(key))
        self.learned.track(key, conversation.session_id, source, loop)
        if self._sessions.get(key) != conversation.session_id:
            self._sessions[key] = conversation.session_id
            self._save()
        return conversation

    def _end(self, key: str, conversation: Conversation) -> None:
        """After a turn: a session the model never answered is discarded, and the chat's
        next message starts a new one."""
        if not conversation.end().kept and self._sessions.get(key) == conversation.session_id:
            del self._sessions[key]
            self._save()

    def _save(self) -> None:
        atomic_write(self._path, json.dumps(self._sessions, indent=2), mode=0o600)

    def _command(self, source: MessageSource, text: str) -> str:
        """A built-in command of the gateway (the table's, ``hermes.agent.commands``)."""
        name = parse(text)[0]
        handler = COMMANDS.get(name)
        return handler(self, source, text) if handler is not None else \
            f"unknown command /{name}; /help lists them"

    def _new(self, source: MessageSource, text: str) -> str:
        ended = self._sessions.pop(source.session_key, None)
        self._next_models.pop(source.session_key, None)
        self._save()
        if ended is not None:  # the hooks run beside the loop, which answers at once
            asyncio.get_running_loop().run_in_executor(None, functools.partial(
                self.service.events.emit, "on_session_reset", session_id=ended,
                platform=source.platform))
        return "started a new conversation"

    def _model(self, source: MessageSource, text: str) -> str:
        """``/model``: the chat session's model; ``/model NAME`` switches it for the rest
        of the session (``/new`` goes back to the profile's)."""
        name = parse(text)[1]
        key = source.session_key
        session_id = self._sessions.get(key)
        if session_id is None and name:  # no session yet: its first turn opens on NAME
            self._next_models[key] = name
        elif session_id is None and key in self._next_models:
            return f"model: {self._next_models[key]}"
        return self.service.model_command(session_id, name)

    def _stop(self, source: MessageSource, text: str) -> str:
        session_id = self._sessions.get(source.session_key)
        if session_id is None or not self.service.conversations.interrupt_session(session_id):
            return "nothing is running"
        return "stopping the running turn"

    def _help(self, source: MessageSource, text: str) -> str:
        return "\n".join(f"{row.usage} — {row.text}" for row
                         in help_rows("gateway", self.service.plugin_commands()))

    def _answer(self, source: MessageSource, text: str) -> str:
        """``/approve`` or ``/deny``: the answer to the chat's pending approval."""
        return self.approvals.answer(source, text)

    def _voice(self, source: MessageSource, text: str) -> str:
        return self.voice.command(source, text, self.adapters.get(source.platform))

    def _link(self, source: MessageSource, text: str) -> str:
        """``/link [CODE]``: one person across accounts (``hermes.identities``)."""
        return chat_link(IdentityStore(self.service.home.path), source, parse(text)[1])

    def _usage(self, source: MessageSource, text: str) -> str:
        session_id = self._sessions.get(source.session_key)
        if session_id is None:
            return "no conversation yet"
        return usage_line(self.service.factory.deps.sessions.get_session(session_id))

    async def _typing(self, source: MessageSource) -> None:
        adapter = self.adapters.get(source.platform)
        while adapter is not None:
            with contextlib.suppress(Exception):  # a missed indicator is harmless
                await adapter.typing(source)
            await asyncio.sleep(TYPING_EVERY)

    async def _reply(self, source: MessageSource, text: str) -> None:
        adapter = self.adapters.get(source.platform)
        if adapter is not None and text:
            await adapter.send(source, text)

    async def _quiet(self, key: str) -> None:
        """Wait until conversation ``key`` has no turn running or queued."""
        worker = self._workers.get(key)
        if worker is not None and not worker.done():
            await asyncio.wait({worker})

    async def drain(self) -> None:
        """Wait until every accepted message has been answered."""
        while pending := [t for t in self._workers.values() if not t.done()]:
            await asyncio.gather(*pending, return_exceptions=True)


Command = Callable[[SessionRouter, MessageSource, str], str]
COMMANDS: Bound[Command] = bind("gateway", {
    "new": SessionRouter._new, "model": SessionRouter._model, "usage": SessionRouter._usage,
    "stop": SessionRouter._stop, "approve": SessionRouter._answer,
    "deny": SessionRouter._answer, "help": SessionRouter._help, "voice": SessionRouter._voice,
    "link": SessionRouter._link})
"""The gateway's built-in slash commands, bound to the table's entries for it."""


def _load(path: Any) -> dict[str, str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
