"""The event bus of one runtime: what the agent loop tells its observers, once per event.

Everything that watches a turn subscribes here with the same rules: plugins and shell
hooks (the public events of ``EVENTS``), and the runtime's own observers — the memory
service, the learning review's nudge counters, the UI (a chat's printer, a streaming
HTTP answer, ACP) — on the same events or the internal ones (``TABLE`` rows with
``public=False``). Adding an event is one ``TABLE`` row.

Callbacks take keyword arguments (and must accept ``**kwargs``: events gain fields);
a session's own callbacks (``scoped``) run first, then the runtime's, each in
registration order. A callback runs in a worker thread under a timeout, or, when
``inline`` (observers that return at once: the UI, the nudge counters), on the firing
thread with no thread hop — what a streamed token needs. A callback that raises or
times out is logged in one line (its traceback only in a log file) and skipped; an
observer whose earlier call is still running is skipped too, so a hung observer never
piles up threads. On a *blocking* event (``pre_tool_call``, ``pre_gateway_dispatch``)
a failing callback fails closed instead: the tool call is refused, the message is not
dispatched (and the next call asks it again). One bus per runtime; two runtimes in one
process never see each other's callbacks.

A leaf of the foundation (imports nothing of ``hermes``): the config validates hook
names against ``EVENTS``, the agent fires, memory, learning, plugins and the UI subscribe.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """One row of the event table."""

    name: str
    when: str
    """When it fires, with its keyword arguments and what a callback may return."""
    blocking: bool = False
    """A failing callback fails closed (its answers decide something)."""
    tool: bool = False
    """About one tool call (a shell hook's ``matcher`` applies)."""
    public: bool = True
    """Plugins and shell hooks may subscribe; else only the runtime's own observers."""


TABLE: tuple[Event, ...] = (
    Event("pre_tool_call", "before a tool runs (tool_name, args, session_id): return "
          "{'action': 'block', 'message': ...} to refuse it or "
          "{'action': 'modify', 'args': {...}} to change its arguments",
          blocking=True, tool=True),
    Event("post_tool_call", "after a tool ran (tool_name, args, result, is_error, "
          "duration_ms, session_id, task_id)", tool=True),
    Event("transform_tool_result", "after post_tool_call (tool_name, args, result, "
          "is_error, status, duration_ms, session_id, task_id, tool_call_id): the first "
          "text returned replaces the result the model sees", tool=True),
    Event("pre_llm_call", "once per turn before the model (session_id, user_message, "
          "conversation_history, is_first_turn, model, platform): text returned, or "
          "{'context': ...}, is appended to the user's message for that turn"),
    Event("post_llm_call", "once per completed turn (session_id, task_id, turn_id, "
          "user_message, assistant_response, conversation_history, model, platform)"),
    Event("pre_api_request", "before each model request (session_id, task_id, turn_id, "
          "api_request_id, api_call_count, model, provider, base_url, api_mode, platform, "
          "user_message, conversation_history, request_messages, message_count, tool_count, "
          "approx_input_tokens, request_char_count, max_tokens, started_at)"),
    Event("post_api_request", "after a model request answered (its pre_api_request "
          "fields but the messages, and api_duration, ended_at, finish_reason, "
          "response_model, usage, assistant_content_chars, assistant_tool_call_count)"),
    Event("api_request_error", "a model request failed for good (its pre_api_request "
          "fields but the messages, and api_duration, ended_at, reason, error: {type, "
          "message})"),
    Event("on_session_start", "a new session (session_id, model, platform)"),
    Event("on_session_end", "a session closes for now (session_id, platform, model, "
          "completed: its last turn completed, interrupted: it was interrupted)"),
    Event("on_session_finalize", "right after on_session_end: flush what the session "
          "holds (session_id, platform, reason)"),
    Event("on_session_reset", "the user started over with /new or /reset (session_id, "
          "platform)"),
    Event("subagent_start", "delegate_task starts a sub-agent (parent_session_id, "
          "parent_turn_id, child_session_id, child_subagent_id, child_role, child_goal)"),
    Event("subagent_stop", "a sub-agent ended (parent_session_id, parent_turn_id, "
          "child_session_id, child_role, child_summary, child_status, duration_ms)"),
    Event("pre_approval_request", "a dangerous command awaits a decision (command, "
          "description, pattern_key, pattern_keys, session_key, surface: cli | gateway | "
          "smart); observers only"),
    Event("post_approval_response", "the decision on it (the same fields and choice: "
          "once | session | always | deny | smart_approve | smart_deny)"),
    Event("on_gateway_start", "the gateway serves this profile (profile, platforms)"),
    Event("on_gateway_stop", "the gateway stops serving this profile (profile)"),
    Event("pre_gateway_dispatch", "a chat message before it runs (platform, chat_id, "
          "user_id, text): {'action': 'skip'} drops it, {'action': 'rewrite', "
          "'text': ...} replaces its text", blocking=True),
    # the runtime's own observers (UI, learning, memory)
    Event("stream_text", "a piece of the answer as it streams (text)", public=False),
    Event("stream_reasoning", "a piece of reasoning as it streams (text)", public=False),
    Event("stream_tool_call", "the model started a tool call (index, name)", public=False),
    Event("tool_start", "a tool call starts (call)", public=False),
    Event("tool_end", "a tool call ended (outcome)", public=False),
    Event("tools_ran", "one tool iteration is over (outcomes)", public=False),
    Event("turn_ended", "a turn ended, any exit reason, its messages persisted (agent, "
          "result)", public=False),
    Event("context_overflow", "the transcript no longer fits (messages): a shorter "
          "transcript returned is retried with", public=False),
)
"""Every event: adding one is one row."""
ALL: dict[str, Event] = {event.name: event for event in TABLE}
EVENTS: dict[str, str] = {e.name: e.when for e in TABLE if e.public}
"""The events plugins and shell hooks may subscribe to, with when each fires."""
BLOCKING = frozenset(e.name for e in TABLE if e.blocking)
"""Events whose callbacks decide something: a failing one fails closed."""
TOOL_EVENTS = frozenset(e.name for e in TABLE if e.tool)
"""Events about one tool call (a shell hook's ``matcher`` applies to these)."""

log = logging.getLogger(__name__)


class HookFailed(Exception):
    """A callback of a blocking event raised or timed out."""


class CallTimedOut(Exception):
    """``call_with_timeout``'s own limit passed (not a ``TimeoutError`` of the callback)."""


class CallStillRunning(Exception):
    """The callback's earlier call has not returned yet: it was not called again."""


@dataclass
class Busy:
    """A callback's call left running after its timeout (skipped until it returns), and
    how often it failed."""

    call: Pending | None = None
    failures: int = 0


@dataclass(frozen=True)
class Callback:
    """One subscription: ``owner`` is the plugin (or ``shell:COMMAND``, ``memory``,
    ``ui``, ...) it came from."""

    event: str
    function: Callable[..., Any]
    owner: str
    timeout: float | None = None
    """Seconds it may take; None: the bus's default."""
    inline: bool = False
    """Run on the firing thread without a timeout (observers that return at once)."""
    busy: Busy = field(default_factory=Busy, compare=False, repr=False)

    def label(self) -> str:
        return f"hook {self.owner} ({self.event})"


@dataclass(frozen=True)
class ToolDecision:
    """What the ``pre_tool_call`` callbacks made of one call."""

    arguments: Any
    """The arguments to run the tool with (changed by ``modify`` answers)."""
    blocked: str | None = None
    """Why the call is refused; None lets it run."""


@dataclass
class HookBus:
    """The callbacks of one runtime (or, ``scoped``, of one session), by event."""

    timeout: float = 10.0
    """Default seconds one callback may take (``plugins.hook_timeout``)."""
    logger: logging.Logger = field(default_factory=lambda: log)
    """Where failures go (the home's ``logs/plugins.log`` once plugins load)."""
    parent: HookBus | None = None
    """The runtime's bus, whose callbacks run after this session's own."""
    _callbacks: dict[str, list[Callback]] = field(default_factory=dict)

    def scoped(self) -> HookBus:
        """A session's bus: its own subscriptions first, then this bus's."""
        return HookBus(self.timeout, self.logger, self)

    def register(self, callback: Callback) -> None:
        """Subscribe; an unknown event raises ``ValueError`` naming the events."""
        if callback.event not in ALL:
            from hermes.errors import did_you_mean

            raise ValueError(f"unknown hook event {callback.event!r}"
                             f"{did_you_mean(callback.event, EVENTS)}; events: "
                             f"{', '.join(EVENTS)}")
        self._callbacks.setdefault(callback.event, []).append(callback)

    def subscribe(self, event: str, function: Callable[..., Any], owner: str, *,
                  inline: bool = False, timeout: float | None = None) -> Callback:
        """``register`` a ``Callback`` of ``function``; returns it."""
        callback = Callback(event, function, owner, timeout, inline)
        self.register(callback)
        return callback

    def has(self, event: str) -> bool:
        return bool(self._callbacks.get(event)) or \
            (self.parent is not None and self.parent.has(event))

    def callbacks(self, event: str) -> list[Callback]:
        own = list(self._callbacks.get(event, ()))
        return own + self.parent.callbacks(event) if self.parent is not None else own

    def emit(self, event: str, **kwargs: Any) -> list[Any]:
        """Run ``event``'s callbacks in order; their answers that are not None. A failing
        callback is logged and skipped (``HookFailed`` on a blocking event)."""
        answers = []
        for callback in self.callbacks(event):
            answer = self._run(callback, kwargs)
            if answer is not None:
                answers.append(answer)
        return answers

    def emitter(self, event: str, *names: str) -> Callable[..., None] | None:
        """A cheap positional firing of ``event`` (``names``: its keyword arguments) for
        the hot path (streamed tokens); None when nothing listens."""
        callbacks = self.callbacks(event)
        if not callbacks:
            return None

        if len(names) == 1 and all(callback.inline for callback in callbacks):
            name = names[0]

            def fire_inline(value: Any) -> None:  # a streamed token: no dict, no thread
                for callback in callbacks:
                    try:
                        callback.function(**{name: value})
                    except Exception as exc:  # the same rule as _run's
                        self._log(callback, failed(callback.label(), exc), exc)

            return fire_inline

        def fire(*values: Any) -> None:
            kwargs = dict(zip(names, values, strict=True))
            for callback in callbacks:
                self._run(callback, kwargs)

        return fire

    def first(self, event: str, **kwargs: Any) -> Any:
        """The first answer of ``event``'s callbacks that is not None; later ones are not
        called."""
        for callback in self.callbacks(event):
            answer = self._run(callback, kwargs)
            if answer is not None:
                return answer
        return None

    def decide_tool(self, tool_name: str, arguments: Any, **kwargs: Any) -> ToolDecision:
        """Ask the ``pre_tool_call`` callbacks in order: each sees the arguments as the
        ones before it left them; the first ``block`` ends it. Fails closed."""
        for callback in self.callbacks("pre_tool_call"):
            try:
                answer = self._run(callback, {"tool_name": tool_name, "args": arguments,
                                              **kwargs})
            except HookFailed as exc:
                return ToolDecision(arguments, f"blocked: {exc}")
            reason = block_reason(answer)
            if reason is not None:
                return ToolDecision(arguments, f"blocked by {callback.owner}: {reason}")
            arguments = modified_arguments(answer, arguments)
        return ToolDecision(arguments)

    def turn_context(self, **kwargs: Any) -> str:
        """The ``pre_llm_call`` answers' context, joined (a string, or ``{'context': ...}``)."""
        parts = [context_of(answer) for answer in self.emit("pre_llm_call", **kwargs)]
        return "\n\n".join(p for p in parts if p)

    def _run(self, callback: Callback, kwargs: Mapping[str, Any]) -> Any:
        if callback.inline:
            try:
                return callback.function(**kwargs)
            except Exception as exc:  # an observer's bug must not break the turn
                problem = failed(callback.label(), exc)
                exc_info: BaseException | None = exc
        else:
            timeout = callback.timeout if callback.timeout is not None else self.timeout
            # a decision is asked for every time (a hung one fails closed once, not forever)
            busy = Busy() if callback.event in BLOCKING else callback.busy
            try:
                return run_guarded(busy, callback.function, dict(kwargs), timeout)
            except CallTimedOut:
                problem, exc_info = f"{callback.label()} took more than {timeout:g} s", None
            except CallStillRunning:
                problem = f"{callback.label()}: its previous call is still running; skipped"
                exc_info = None
            except Exception as exc:  # a plugin's bug must not break the turn
                problem, exc_info = failed(callback.label(), exc), exc
        self._log(callback, problem, exc_info)
        if callback.event in BLOCKING:
            raise HookFailed(problem)
        return None

    def _log(self, callback: Callback, problem: str, exc: BaseException | None) -> None:
        """One line; the traceback only into a log file (a logger with handlers), never
        to the terminal. An inline observer failing on every call (a token printer) is
        reported once, then at debug level."""
        callback.busy.failures += 1
        level = logging.DEBUG if callback.inline and callback.busy.failures > 1 \
            else logging.WARNING
        self.logger.log(level, problem, exc_info=exc if self.logger.handlers else None)


def failed(label: str, exc: BaseException) -> str:
    return f"{label} failed: {type(exc).__name__}: {exc}"


@dataclass
class Pending:
    """A call running in a daemon thread (with the caller's context variables)."""

    done: threading.Event = field(default_factory=threading.Event)
    value: Any = None
    error: BaseException | None = None

    def result(self, timeout: float) -> Any:
        """Its value or its exception; ``CallTimedOut`` after ``timeout`` seconds (the
        thread is left to finish on its own)."""
        if not self.done.wait(max(timeout, 0.0)):
            raise CallTimedOut(timeout)
        if self.error is not None:
            raise self.error
        return self.value


def start_call(function: Callable[..., Any], kwargs: Mapping[str, Any],
               name: str = "hook") -> Pending:
    """``function(**kwargs)`` started in a daemon thread; a coroutine it returns is run to
    completion there."""
    import asyncio  # not at the top: ``hermes plugins list`` reads EVENTS, nothing more
    import inspect

    pending = Pending()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            value = context.run(function, **kwargs)
            pending.value = asyncio.run(value) if inspect.iscoroutine(value) else value
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            pending.error = exc
        finally:
            pending.done.set()

    threading.Thread(target=work, name=name, daemon=True).start()
    return pending


def call_with_timeout(function: Callable[..., Any], kwargs: dict[str, Any],
                      timeout: float) -> Any:
    """``function(**kwargs)`` in a daemon thread: its result, its exception, or
    ``CallTimedOut`` after ``timeout`` seconds (the thread is left to finish)."""
    return start_call(function, kwargs).result(timeout)


def run_guarded(busy: Busy, function: Callable[..., Any], kwargs: Mapping[str, Any],
                timeout: float, name: str = "hook") -> Any:
    """``call_with_timeout``, unless the call ``busy`` left running has not returned
    (``CallStillRunning``); a call that times out is remembered in ``busy``."""
    if busy.call is not None and not busy.call.done.is_set():
        raise CallStillRunning()
    pending = start_call(function, kwargs, name)
    try:
        return pending.result(timeout)
    except CallTimedOut:
        busy.call = pending  # concurrent calls that return in time never mark it
        raise


def gather(calls: Mapping[str, tuple[Busy, Callable[[], Any]]], timeout: float,
           name: str = "hook") -> dict[str, Any]:
    """Start every call at once (each skipped while its ``busy`` call still runs) and
    wait for them under one deadline, ``timeout`` seconds from now: what each gave, by
    key — its value, or the exception (``CallTimedOut``, ``CallStillRunning``, its own)."""
    started: dict[str, Pending | BaseException] = {}
    for key, (busy, function) in calls.items():
        if busy.call is not None and not busy.call.done.is_set():
            started[key] = CallStillRunning()
        else:
            started[key] = start_call(function, {}, f"{name}-{key}")
    deadline = time.monotonic() + timeout
    outcomes: dict[str, Any] = {}
    for key, pending in started.items():
        if isinstance(pending, BaseException):
            outcomes[key] = pending
            continue
        try:
            outcomes[key] = pending.result(deadline - time.monotonic())
        except CallTimedOut as exc:
            calls[key][0].call = pending
            outcomes[key] = exc
        except Exception as exc:  # noqa: BLE001 - the caller reports each
            outcomes[key] = exc
    return outcomes


def block_reason(answer: Any) -> str | None:
    """The reason of a ``block`` answer (Hermes' ``{'action': 'block', 'message'}`` or
    the ``{'decision': 'block', 'reason'}`` shape), else None."""
    if not isinstance(answer, dict):
        return None
    if answer.get("action") == "block" or answer.get("decision") == "block":
        reason = answer.get("message") or answer.get("reason")
        return str(reason) if reason else "no reason given"
    return None


def modified_arguments(answer: Any, arguments: Any) -> Any:
    """The arguments a ``modify`` answer gives (``{'action': 'modify', 'args': {...}}``),
    else ``arguments`` unchanged."""
    if isinstance(answer, dict) and answer.get("action") == "modify" \
            and isinstance(answer.get("args"), dict):
        return answer["args"]
    return arguments


def context_of(answer: Any) -> str:
    if isinstance(answer, str):
        return answer.strip()
    if isinstance(answer, dict) and isinstance(answer.get("context"), str):
        return str(answer["context"]).strip()
    return ""
