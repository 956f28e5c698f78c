"""One turn of the Chat page, streamed as server-sent events.

The turn runs through the profile's ``ProfileService`` (the gateway's: a slot of the
runtime's ``Conversations``, ``/<skill>`` expanded, the turn logged, the session ended
after it) in a worker thread; what it reports (answer text, tool calls written, started
and finished, approval questions) goes to an ``asyncio.Queue`` and out as events:

``session`` (its id, first), ``text``, ``tool_writing``, ``tool_start``, ``tool_end``,
``approval`` (answered by a POST: ``ChatApprovals``, as a gateway chat's ``/approve``),
``notice``, ``refused`` (one line: no key, busy, an unknown command), ``done``.
A client that goes away interrupts the turn.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hermes.agent.attachments import Attachment, ImageRefused, VisionLimits, from_data_url
from hermes.agent.commands import parse
from hermes.agent.conversations import Busy, Conversation, Draining
from hermes.agent.dispatch import CallOutcome
from hermes.agent.factory import Interaction
from hermes.agent.loop import AgentEvents
from hermes.agent.prechecks import MissingKey
from hermes.agent.text_files import TextFile, with_files
from hermes.chats import MessageSource
from hermes.dashboard.pages.chat_commands import NEW, builtin_reply, is_plugin_command
from hermes.dashboard.pages.chat_files import Image
from hermes.dashboard.pages.chat_runtimes import SOURCE, ChatRuntime, ChatRuntimes, source_of
from hermes.errors import UserError
from hermes.models.types import StreamCallbacks, ToolCall
from hermes.tools.context import ApprovalRequest

RESULT_SHOWN = 4000
"""Characters of a tool's result sent to the page (the transcript keeps all of it)."""
Event = dict[str, Any]


@dataclass
class TurnStream:
    """The events of one running turn, put from any thread."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Event] = field(default_factory=asyncio.Queue)
    asked: ApprovalRequest | None = None
    """The approval question already sent (a timeout's note comes while it is open)."""

    def put(self, event: Event) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, event)

    def events(self) -> AgentEvents:
        return AgentEvents(
            stream=StreamCallbacks(
                on_text=lambda text: self.put({"type": "text", "text": text, "at": time.time()}),
                on_tool_call=lambda index, name: self.put(
                    {"type": "tool_writing", "index": index, "name": name})),
            on_tool_start=lambda call: self.put(tool_started(call)),
            on_tool_end=lambda outcome: self.put(tool_ended(outcome)))


class ChatDoor:
    """The Chat page's state for the dashboard's life: the profiles' runtimes and the
    turns streaming now, by (profile, session id)."""

    def __init__(self, environ: dict[str, str], borrowed: dict[str, Any] | None = None):
        self.runtimes = ChatRuntimes(environ, self._reply_for, borrowed)
        self.live: dict[tuple[str, str], TurnStream] = {}

    def _reply_for(self, profile: str) -> Any:
        async def reply(source: MessageSource, text: str) -> None:
            """An approval question, or its timeout's note, for the turn's page."""
            stream = self.live.get((profile, source.chat_id))
            if stream is None:
                return
            runtime = self.runtimes.get_opened(profile)
            request = runtime.approvals.waiting(source) if runtime else None
            if request is not None and request is not stream.asked:
                stream.asked = request
                stream.put(approval_asked(request))
            else:
                stream.put({"type": "notice", "text": text})
        return reply

    async def turn(self, profile: str, runtime: ChatRuntime, session_id: str,
                   message: Message) -> AsyncIterator[str]:
        """The events of one message to ``session_id`` (new with that id, or resumed): a
        built-in command's reply, else a turn (a plugin's command, a skill, the model);
        one turn of a session at a time (another tab's is refused)."""
        reply = await asyncio.to_thread(builtin_reply, runtime, session_id, message.text)
        if reply is not None:  # the session stays as it was (maybe still unsaved)
            yield sse({"type": "session", "id": session_id, "unsaved": True})
            yield sse({"type": "new"} if reply == NEW else {"type": "notice", "text": reply})
            return
        yield sse({"type": "session", "id": session_id})
        key = (profile, session_id)
        if key in self.live:
            yield sse({"type": "refused", "message": "a turn of this session is running: "
                                                     "wait for it or press Stop"})
            return
        stream = self.live[key] = TurnStream(asyncio.get_running_loop())
        try:
            async for event in self._open_and_run(runtime, session_id, stream, message):
                yield event
        finally:
            self.live.pop(key, None)

    async def _open_and_run(self, runtime: ChatRuntime, session_id: str, stream: TurnStream,
                            message: Message) -> AsyncIterator[str]:
        source = source_of(session_id)
        how = Interaction(source=SOURCE, stream=True, interactive=True, events=stream.events(),
                          approve=runtime.approvals.callback(source, stream.loop))
        service = runtime.service
        work: Callable[[], Event]
        interrupt: Callable[[], object]
        try:
            with service.slot():
                if is_plugin_command(runtime, message.text):
                    name, argument = parse(message.text)
                    work = partial(_plugin_reply, runtime, name, argument, how, session_id)
                    interrupt = partial(service.conversations.interrupt_session, session_id)
                else:
                    conversation = await asyncio.to_thread(service.open, how, session_id)
                    work = partial(_run_to_end, runtime, conversation, message)
                    interrupt = conversation.interrupt
                async for event in _drain(stream, work, interrupt):
                    yield event
        except (MissingKey, Busy, Draining, UserError) as exc:
            yield sse({"type": "refused", "message": str(exc)})


async def _drain(stream: TurnStream, work: Callable[[], Event],
                 interrupt: Callable[[], object]) -> AsyncIterator[str]:
    """``work`` run in a worker thread, its events sent as they come, then its last."""
    running = asyncio.ensure_future(asyncio.to_thread(work))
    running.add_done_callback(lambda _: stream.put({"type": "end"}))
    try:
        while (event := await stream.queue.get())["type"] != "end":
            yield sse(event)
    except asyncio.CancelledError:  # the page went away: stop the turn (then ended)
        interrupt()
        raise
    yield sse(running.result())


def _plugin_reply(runtime: ChatRuntime, name: str, argument: str, how: Interaction,
                  session_id: str) -> Event:
    reply = runtime.service.run_plugin_command(name, argument, how, session_id)
    return {"type": "notice", "text": reply}


@dataclass(frozen=True)
class Message:
    """What the person sent: text, the images attached (name and ``data:`` URL) and the
    text files (checked already: ``chat_files``)."""

    text: str
    images: tuple[Image, ...] = ()
    files: tuple[TextFile, ...] = ()

    def attachments(self, conversation: Conversation) -> list[Attachment]:
        """The images, checked as every front door checks them (``vision.*``)."""
        limits: VisionLimits = conversation.vision_limits()
        return [from_data_url(url, limits, name) for name, url in self.images]


def _run_to_end(runtime: ChatRuntime, conversation: Conversation, message: Message
                ) -> Event:
    """The turn, ``/<skill>`` expanded: its ``done`` event, or a refusal's one line."""
    service = runtime.service
    text = message.text
    try:
        images = message.attachments(conversation)
        if text.startswith("/") and not text.startswith("//"):
            turn = service.skill_turn(text)
            if turn is None:
                return refused(f"unknown command /{parse(text)[0]}; /help lists them")
            text = turn.message
        result = service.run(conversation, with_files(text, message.files), images)
    except (ImageRefused, UserError) as exc:
        return refused(str(exc))
    finally:
        conversation.end()
    return {"type": "done", "exit_reason": result.exit_reason, "error": result.error}


def refused(line: str) -> Event:
    return {"type": "refused", "message": line}


def tool_started(call: ToolCall) -> Event:
    return {"type": "tool_start", "id": call.id, "name": call.name,
            "arguments": call.arguments}


def tool_ended(outcome: CallOutcome) -> Event:
    content = outcome.content
    if len(content) > RESULT_SHOWN:
        content = content[:RESULT_SHOWN] + f"… ({len(outcome.content)} characters)"
    return {"type": "tool_end", "id": outcome.call.id, "name": outcome.call.name,
            "error": outcome.is_error, "result": content}


def approval_asked(request: ApprovalRequest) -> Event:
    return {"type": "approval", "command": request.command, "reason": request.reason,
            "scope": request.scope, "requester": request.requester}


def sse(event: Event) -> str:
    """One server-sent event: its ``type`` as the event name, the whole as JSON data."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
