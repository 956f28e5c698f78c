"""One ACP session: our agent, and its turns streamed to the editor as they happen.

The agent's callbacks (answer text, thoughts, tool calls starting and ending) post
ACP updates on the session's channel; a prompt runs the agent's turn in a worker
thread and answers once every update of the turn is sent. ``cancel`` interrupts the
turn (a pending permission question is rejected, a running command stopped).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError, update_agent_message_text, update_agent_thought_text
from acp.schema import PromptResponse, StopReason

from hermes.acp.channel import UpdateChannel
from hermes.acp.updates import call_started, finished_updates
from hermes.agent.attachments import Attachment, ImageRefused
from hermes.agent.conversations import Conversation
from hermes.agent.dispatch import CallOutcome
from hermes.agent.loop import AgentEvents, TurnResult
from hermes.models.types import StreamCallbacks, ToolCall

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn", "budget_exhausted": "max_turn_requests",
    "interrupted": "cancelled",
}
"""How a turn ended, as ACP's stop reason (an ``error`` is answered as an error)."""


class TurnEvents:
    """The agent's events of one session as updates on its channel."""

    def __init__(self, channel: UpdateChannel, cwd: Path):
        self.channel = channel
        self.cwd = cwd
        self.answered = False
        """Whether text of the model's latest reply reached the editor."""
        self._calls = threading.local()  # a tool's start, approval and end share its thread

    def agent_events(self) -> AgentEvents:
        return AgentEvents(stream=StreamCallbacks(on_text=self.text, on_reasoning=self.thought),
                           on_tool_start=self.tool_started, on_tool_end=self.tool_finished)

    def current_call(self) -> str | None:
        """The id of the tool call running on this thread (what an approval is about)."""
        return getattr(self._calls, "id", None)

    def text(self, piece: str) -> None:
        self.answered = True
        self.channel.post(update_agent_message_text(piece))

    def thought(self, piece: str) -> None:
        self.channel.post(update_agent_thought_text(piece))

    def tool_started(self, call: ToolCall) -> None:
        self._calls.id = call.id
        self.answered = False
        self.channel.post(call_started(call, self.cwd))

    def tool_finished(self, outcome: CallOutcome) -> None:
        self._calls.id = None
        for update in finished_updates(outcome.call, outcome.content, outcome.is_error,
                                       self.cwd):
            self.channel.post(update)


@dataclass
class EditorSession:
    """An open ACP session."""

    conversation: Conversation
    events: TurnEvents
    learning: Any = None
    """The runtime's learning service: its reviews wait while a turn runs."""
    running: bool = False

    async def prompt(self, text: str, images: Sequence[Attachment] = ()) -> PromptResponse:
        if self.running:
            raise RequestError.invalid_request(
                {"details": "a prompt is already running in this session; cancel it first"})
        self.running = True
        self.events.answered = False
        if self.learning is not None:
            self.learning.hold()
        try:
            try:
                result = await asyncio.to_thread(self.conversation.run, text, images=images)
            except ImageRefused as exc:  # too many, or no model here can see them
                raise RequestError.invalid_params({"prompt": str(exc)}) from exc
            self._answer_if_unstreamed(result)
            await self.events.channel.drain()
        finally:
            self.running = False
            if self.learning is not None:
                self.learning.release()
        return self._response(result)

    def cancel(self) -> None:
        if self.running:
            self.conversation.interrupt()

    def _answer_if_unstreamed(self, result: TurnResult) -> None:
        """A final answer no stream delivered (a forced answer, a reply that came whole)
        is sent as one chunk."""
        if result.text and not self.events.answered and result.exit_reason != "error":
            self.events.channel.post(update_agent_message_text(result.text))

    @staticmethod
    def _response(result: TurnResult) -> PromptResponse:
        if result.exit_reason == "error":
            raise RequestError(-32603, str(result.error))
        return PromptResponse(stop_reason=STOP_REASONS[result.exit_reason])
