"""The agent loop: one user turn = model calls and tool calls until a final answer.

Each turn: append the user's message (plus per-turn hook context), call the
model, run the tool calls it asks for, repeat until it answers without tools,
the iteration budget runs out (then exactly one grace call, and a forced final
answer if even that asks for tools), the user interrupts, or a call fails for
good. Every message is persisted the moment it exists.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from hermes.agent.api_hooks import ApiRequest
from hermes.agent.attachments import Attachment, user_content
from hermes.agent.compress import Compressor, continue_in_child
from hermes.agent.dispatch import CallOutcome, plan_batches, run_calls, write_path
from hermes.agent.repair import repair_messages
from hermes.events import HookBus
from hermes.models.base import ModelClient
from hermes.models.errors import CallCancelledError, ContextOverflowError, ModelCallError
from hermes.models.types import ModelReply, StreamCallbacks, ToolCall, Usage
from hermes.sessions.store import SessionStore
from hermes.tools.base import ToolResult
from hermes.tools.context import ToolContext
from hermes.tools.registry import ToolRegistry
from hermes.tools.results import cap_result, error, images_message

ExitReason = Literal["completed", "budget_exhausted", "interrupted", "error"]
GRACE_NOTE = ("[The tool-call budget for this turn is used up. Answer now with what you "
              "have, without calling any tool.]")
FORCED_ANSWER = "I ran out of steps before finishing this task. Here is where I stopped."
INTERRUPTED_NOTE = "[The user interrupted this turn before it finished.]"
"""Ends an interrupted turn in the transcript: the next message is a turn of its own (not
merged into the interrupted one and sent again), and the model sees what happened."""
MAX_UNKNOWN_TOOL_RETRIES = 3
MIN_PREVIEW_CHARS = 2_000
"""Even past the turn's budget, each result keeps a preview this long."""


@dataclass(frozen=True)
class TurnResult:
    """How one user turn ended."""

    text: str
    exit_reason: ExitReason
    iterations: int
    usage: Usage
    error: str | None = None


@dataclass
class AgentEvents:
    """UI callbacks, all optional: the agent subscribes them to its session's event bus
    (inline: on the turn's thread, no timeout, a failure logged and skipped)."""

    stream: StreamCallbacks = field(default_factory=StreamCallbacks)
    on_tool_start: Callable[[ToolCall], None] | None = None
    on_tool_end: Callable[[CallOutcome], None] | None = None

    def subscribe(self, bus: HookBus, owner: str = "ui") -> None:
        """Each callback given, on its event of ``bus``."""
        stream = self.stream
        for event, function in (("stream_text", stream.on_text),
                                ("stream_reasoning", stream.on_reasoning)):
            if function is not None:
                bus.subscribe(event, _positional(function, "text"), owner, inline=True)
        if stream.on_tool_call is not None:
            bus.subscribe("stream_tool_call", _positional(stream.on_tool_call, "index", "name"),
                          owner, inline=True)
        if self.on_tool_start is not None:
            bus.subscribe("tool_start", _positional(self.on_tool_start, "call"), owner,
                          inline=True)
        if self.on_tool_end is not None:
            bus.subscribe("tool_end", _positional(self.on_tool_end, "outcome"), owner,
                          inline=True)


def _positional(function: Callable[..., Any], *names: str) -> Callable[..., Any]:
    """``function`` called with the event's ``names`` arguments, in order."""
    if len(names) == 1:
        name = names[0]
        return lambda **event: function(event[name])
    return lambda **event: function(*(event[n] for n in names))


class Agent:
    """One conversation (session) with one runtime's services."""

    def __init__(self, *, model: ModelClient, tools: ToolRegistry, store: SessionStore,
                 tool_context: ToolContext, session_id: str, messages: list[dict[str, Any]],
                 max_iterations: int, hooks: HookBus | None = None, stream: bool = True,
                 events: AgentEvents | None = None, compressor: Compressor | None = None,
                 turn_output_budget: int = 150_000, platform: str = "cli"):
        self.model = model
        self.tools = tools
        self.store = store
        self.ctx = tool_context
        self.session_id = session_id
        self.messages = messages
        """The transcript, system prompt first; persisted as it grows."""
        self.max_iterations = max_iterations
        self.bus = (hooks or HookBus()).scoped()
        """This session's event bus: its own observers (memory, learning, the UI), then
        the runtime's (plugins, shell hooks). Every event fires once, here."""
        self.stream = stream
        self.events = events or AgentEvents()
        self.events.subscribe(self.bus)
        self.compressor = compressor
        self.turn_output_budget = turn_output_budget
        """Characters all tool results of one model turn may use together."""
        """Shortens the transcript near the context window; None: never compress."""
        self.platform = platform
        """Where the session talks (``cli``, a gateway platform), as hooks are told."""
        self.interrupted = threading.Event()
        """Set by ``interrupt()`` (e.g. from a Ctrl-C handler)."""
        self.ctx.cancelled = self.interrupted.is_set  # running commands stop on interrupt
        self.ctx.observe = self.bus.emit  # approvals and delegation tell the observers
        self._finished = threading.Event()
        """Set when the running model call returns, or by ``interrupt()``."""
        self.user_text = ""
        """The user's message of the running (or last) turn."""
        self.turn_id = ""
        """Names the running (or last) turn to observers."""
        self._api_calls = 0
        self._last_exit: ExitReason | None = None
        self.typed_text: dict[str, str] = {}
        """What the user typed, by the content of a user message that also carries
        per-turn hook context (so ``/retry`` sends their words, not the context)."""

    def close(self) -> None:
        """The session is over for now: ``on_session_end``, then ``on_session_finalize``."""
        self.bus.emit("on_session_end", session_id=self.session_id, platform=self.platform,
                      task_id=self.session_id, turn_id=self.turn_id, model=self.model.model,
                      completed=self._last_exit == "completed",
                      interrupted=self._last_exit == "interrupted")
        self.bus.emit("on_session_finalize", session_id=self.session_id,
                      platform=self.platform, reason="closed")

    def interrupt(self) -> None:
        """Stop the running turn: the model call returns at once, unstarted tools are
        cancelled, and the transcript stays valid."""
        self.interrupted.set()
        self._finished.set()

    def run_turn(self, user_text: str, *, clear_interrupt: bool = True,
                 images: Sequence[Attachment] = ()) -> TurnResult:
        """One turn. ``clear_interrupt=False``: an interrupt that came since the caller
        cleared it (``interrupted.clear()``) stops this turn at once, none is lost.
        ``images``: checked images the user attached, sent as image parts of the message."""
        if clear_interrupt:
            self.interrupted.clear()
        first = not any(m.get("role") == "user" for m in self.messages)
        self.turn_id, self._api_calls = uuid.uuid4().hex[:12], 0
        context = self.bus.turn_context(
            user_message=user_text, session_id=self.session_id, task_id=self.session_id,
            is_first_turn=first, model=self.model.model, platform=self.platform,
            conversation_history=list(self.messages))
        self.user_text = user_text
        self.ctx.state.user_request = user_text  # what an approval judge weighs commands against
        if first:
            self.store.rename(self.session_id, _title_from(user_text))
        content = f"{user_text}\n\n{context}" if context else user_text
        if context:
            self.typed_text[content] = user_text
        self._append({"role": "user", "content": user_content(content, images)})
        usage = Usage()
        unknown_streak = 0
        for iteration in range(1, self.max_iterations + 2):
            grace = iteration > self.max_iterations
            if grace:
                self._append({"role": "user", "content": GRACE_NOTE})
            try:
                reply = self._call_model_fitting()
            except CallCancelledError:
                return self._interrupted("", iteration, usage)
            except ModelCallError as exc:
                return self._failed(str(exc), iteration, usage)
            usage = usage + reply.usage
            if not reply.tool_calls or grace:
                return self._ended(self._final(reply, grace, iteration, usage))
            self._append(reply.as_message(), reply)
            outcomes = self._run_tools(list(reply.tool_calls))
            self.bus.emit("tools_ran", outcomes=outcomes)
            if self.interrupted.is_set():
                return self._interrupted(reply.content, iteration, usage)
            unknown = all(self.tools.get(c.name) is None for c in reply.tool_calls)
            unknown_streak = unknown_streak + 1 if unknown else 0
            if unknown_streak > MAX_UNKNOWN_TOOL_RETRIES:
                return self._failed("the model kept calling tools that do not exist: "
                                    + ", ".join(o.call.name for o in outcomes), iteration, usage)
        raise AssertionError("unreachable: the grace call always ends the turn")

    # -- steps -------------------------------------------------------------

    def _call_model(self) -> ModelReply:
        """Call the model in a worker thread, so an interrupt returns at once.

        An interrupted call is abandoned: its thread finishes (or times out) in the
        background and its reply is discarded.
        """
        bus = self.bus
        callbacks = StreamCallbacks(
            on_text=bus.emitter("stream_text", "text"),
            on_reasoning=bus.emitter("stream_reasoning", "text"),
            on_tool_call=bus.emitter("stream_tool_call", "index", "name"),
            cancelled=self.interrupted.is_set)
        messages, tools = repair_messages(self.messages), self.tools.schemas() or None
        box: dict[str, Any] = {}
        finished = self._finished = threading.Event()
        if self.interrupted.is_set():  # came before this call's event existed
            raise CallCancelledError("interrupted")
        self._api_calls += 1
        request = ApiRequest.start(self, messages, tools, self._api_calls)

        def work() -> None:
            try:
                box["reply"] = self.model.complete(messages, tools, stream=self.stream,
                                                   callbacks=callbacks)
            except BaseException as exc:  # noqa: BLE001 - handed to the turn's thread
                box["error"] = exc
            finally:
                finished.set()

        threading.Thread(target=work, name="model-call", daemon=True).start()
        finished.wait()
        if self.interrupted.is_set():
            raise CallCancelledError("interrupted")
        if "error" in box:
            if request is not None:
                request.failed(box["error"])
            raise box["error"]
        reply: ModelReply = box["reply"]
        if request is not None:
            request.answered(reply)
        return reply

    def _run_tools(self, calls: list[ToolCall]) -> list[CallOutcome]:
        cwd = self.ctx.cwd
        batches = plan_batches(calls, self.tools.is_parallel_safe,
                               lambda call: write_path(call, cwd))
        outcomes = self._within_turn_budget(run_calls(calls, self._execute, batches,
                                                      self.interrupted))
        for outcome in outcomes:
            self._append({"role": "tool", "tool_call_id": outcome.call.id,
                          "name": outcome.call.name, "content": outcome.content})
        shown = images_message([(o.call.name, image) for o in outcomes if o.result is not None
                                for image in o.result.images])
        if shown is not None:
            self._append(shown)
        return outcomes

    def _within_turn_budget(self, outcomes: list[CallOutcome]) -> list[CallOutcome]:
        """Cap the turn's tool output as a whole: once the results (in call order) use
        up ``turn_output_budget``, later ones are spilled to files behind a preview."""
        used = 0
        capped = []
        for outcome in outcomes:
            limit = max(self.turn_output_budget - used, MIN_PREVIEW_CHARS)
            if len(outcome.content) > limit:
                content = cap_result(outcome.content, limit, self.ctx.spill_dir,
                                     outcome.call.name).content
                outcome = replace(outcome, content=content)
            used += len(outcome.content)
            capped.append(outcome)
        return capped

    def _execute(self, call: ToolCall) -> CallOutcome:
        self.bus.emit("tool_start", call=call)
        result = self.dispatch(call.name, call.arguments)
        outcome = CallOutcome(call, result.content, result.is_error, result)
        self.bus.emit("tool_end", outcome=outcome)
        return outcome

    def dispatch(self, name: str, arguments: str | dict[str, Any] | None) -> ToolResult:
        """One tool call through the whole pipeline: the hooks (``pre_tool_call`` may
        refuse it or change its arguments), the registry (validation, approval,
        redaction, the result's cap), the hooks after. What the model's calls and a
        plugin's ``dispatch_tool`` go through alike."""
        bus = self.bus
        args = hook_arguments(arguments) if bus.has("pre_tool_call") or \
            bus.has("post_tool_call") else {}
        if bus.has("pre_tool_call"):
            decision = bus.decide_tool(name, args, session_id=self.session_id,
                                       task_id=self.session_id)
            if decision.blocked is not None:
                result = ToolResult(name, self.ctx.redact(error(decision.blocked)), True)
                return self._after_tool(name, args, result, blocked=True)
            if decision.arguments is not args:
                arguments = args = decision.arguments
        result = self.tools.dispatch(name, arguments, self.ctx)
        return self._after_tool(name, result.arguments or args, result)

    def _after_tool(self, name: str, args: Any, result: ToolResult,
                    blocked: bool = False) -> ToolResult:
        self.bus.emit(
            "post_tool_call", tool_name=name, args=args, result=result.content,
            is_error=result.is_error, blocked=blocked, session_id=self.session_id,
            task_id=self.session_id, duration_ms=round(result.duration_s * 1000))
        if not self.bus.has("transform_tool_result"):
            return result
        answers = self.bus.emit(
            "transform_tool_result", tool_name=name, args=args, result=result.content,
            is_error=result.is_error, status="error" if result.is_error else "ok",
            session_id=self.session_id, task_id=self.session_id, turn_id=self.turn_id,
            tool_call_id="", duration_ms=round(result.duration_s * 1000))
        text = next((answer for answer in answers if isinstance(answer, str)), None)
        return result if text is None else replace(result, content=self.ctx.redact(text))

    def _final(self, reply: ModelReply, grace: bool, iteration: int, usage: Usage) -> TurnResult:
        if grace and reply.tool_calls:  # the grace call still wanted tools: force an answer
            text = reply.content or FORCED_ANSWER
            self._append({"role": "assistant", "content": text}, reply)
            return TurnResult(text, "budget_exhausted", iteration, usage)
        self._append({"role": "assistant", "content": reply.content}, reply)
        return TurnResult(reply.content, "budget_exhausted" if grace else "completed",
                          iteration, usage)

    def _interrupted(self, text: str, iteration: int, usage: Usage) -> TurnResult:
        self._append({"role": "assistant", "content": INTERRUPTED_NOTE})
        return self._ended(TurnResult(text, "interrupted", iteration, usage))

    def _failed(self, error: str, iteration: int, usage: Usage) -> TurnResult:
        return self._ended(TurnResult("", "error", iteration, usage, error=error))

    def _ended(self, result: TurnResult) -> TurnResult:
        """Record how the turn ended on the session (its latest exit reason)."""
        self.store.end_session(self.session_id, result.exit_reason)
        self._last_exit = result.exit_reason
        if result.exit_reason == "completed":
            self.bus.emit(
                "post_llm_call", session_id=self.session_id, task_id=self.session_id,
                turn_id=self.turn_id, user_message=self.user_text,
                assistant_response=result.text, conversation_history=list(self.messages),
                model=self.model.model, platform=self.platform)
        self.bus.emit("turn_ended", agent=self, result=result)
        return result

    def _call_model_fitting(self) -> ModelReply:
        """Call the model, compressing first when the transcript nears the window; when
        it overflows anyway, let a context-overflow hook (else the compressor) shorten it
        and try once more."""
        if self.compressor is not None and self.compressor.due(self.messages):
            self._compress(overflowed=False)
        try:
            return self._call_model()
        except ContextOverflowError:
            shorter = self.bus.first("context_overflow", messages=self.messages)
            if shorter is not None:
                self.messages = shorter
                return self._call_model()
            if self._compress(overflowed=True):
                return self._call_model()
            raise

    def _compress(self, *, overflowed: bool) -> bool:
        """Compress the transcript and go on in a child session of this one (lineage).
        False when there was nothing to compress."""
        if self.compressor is None:
            return False
        compressed = self.compressor.compress(self.messages, overflowed=overflowed,
                                              cancelled=self.interrupted.is_set)
        if compressed is None:
            return False
        self.session_id = continue_in_child(self.store, self.session_id, compressed)
        self.ctx.session_id = self.session_id
        self.messages = compressed.messages
        return True

    def _append(self, message: dict[str, Any], reply: ModelReply | None = None) -> None:
        """Add to the transcript and persist at once (a crash loses nothing said)."""
        self.messages.append(message)
        usage = reply.usage if reply is not None else None
        self.store.add_message(
            self.session_id, message["role"], message.get("content"),
            tool_calls=message.get("tool_calls"), tool_call_id=message.get("tool_call_id"),
            tool_name=message.get("name"), reasoning=reply.reasoning if reply else None,
            finish_reason=reply.finish_reason if reply else None,
            usage=usage,
        )


def hook_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as hooks see them: a dict (``{}`` when they do not parse; the
    registry then reports them to the model)."""
    from hermes.tools.arguments import ArgumentError, parse_arguments

    try:
        return parse_arguments(arguments)
    except ArgumentError:
        return {}


def _title_from(text: str, limit: int = 60) -> str:
    """A session title from its first message: the first line, shortened."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "untitled")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
