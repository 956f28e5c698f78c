"""Named hook events of one runtime: what plugins and shell hooks subscribe to.

Callbacks take keyword arguments (and must accept ``**kwargs``: events gain
fields); they run in registration order, each in a worker thread under a timeout.
A callback that raises or times out is logged and skipped, except on a *blocking*
event (``pre_tool_call``, ``pre_gateway_dispatch``), where it fails closed: the
tool call is blocked, the message is not dispatched. One ``HookBus`` per runtime;
two runtimes in one process never see each other's callbacks.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

EVENTS: dict[str, str] = {
    "pre_tool_call": "before a tool runs (tool_name, args, session_id): return "
                     "{'action': 'block', 'message': ...} to refuse it or "
                     "{'action': 'modify', 'args': {...}} to change its arguments",
    "post_tool_call": "after a tool ran (tool_name, args, result, is_error, duration_ms)",
    "pre_llm_call": "once per turn before the model (session_id, user_message, "
                    "is_first_turn, model, platform): text returned, or {'context': ...}, "
                    "is appended to the user's message for that turn",
    "post_llm_call": "once per completed turn (session_id, user_message, "
                     "assistant_response, model, platform)",
    "on_session_start": "a new session (session_id, model, platform)",
    "on_session_end": "a session closes for now (session_id, platform)",
    "on_session_reset": "the user started over with /new or /reset (session_id, platform)",
    "on_gateway_start": "the gateway serves this profile (profile, platforms)",
    "on_gateway_stop": "the gateway stops serving this profile (profile)",
    "pre_gateway_dispatch": "a chat message before it runs (platform, chat_id, user_id, "
                            "text): {'action': 'skip'} drops it, {'action': 'rewrite', "
                            "'text': ...} replaces its text",
}
"""Every event, with when it fires and what a callback may return."""
BLOCKING = frozenset({"pre_tool_call", "pre_gateway_dispatch"})
"""Events whose callbacks decide something: a failing one fails closed."""
TOOL_EVENTS = frozenset({"pre_tool_call", "post_tool_call"})
"""Events about one tool call (a shell hook's ``matcher`` applies to these)."""

log = logging.getLogger(__name__)


class HookFailed(Exception):
    """A callback of a blocking event raised or timed out."""


class CallTimedOut(Exception):
    """``call_with_timeout``'s own limit passed (not a ``TimeoutError`` of the callback)."""


@dataclass(frozen=True)
class Callback:
    """One subscription: ``owner`` is the plugin (or ``shell:COMMAND``) it came from."""

    event: str
    function: Callable[..., Any]
    owner: str
    timeout: float | None = None
    """Seconds it may take; None: the bus's default."""


@dataclass(frozen=True)
class ToolDecision:
    """What the ``pre_tool_call`` callbacks made of one call."""

    arguments: Any
    """The arguments to run the tool with (changed by ``modify`` answers)."""
    blocked: str | None = None
    """Why the call is refused; None lets it run."""


@dataclass
class HookBus:
    """The callbacks of one runtime, by event."""

    timeout: float = 10.0
    """Default seconds one callback may take (``plugins.hook_timeout``)."""
    logger: logging.Logger = field(default_factory=lambda: log)
    """Where failures go, with their tracebacks (the home's ``logs/plugins.log``)."""
    _callbacks: dict[str, list[Callback]] = field(default_factory=dict)

    def register(self, callback: Callback) -> None:
        """Subscribe; an unknown event raises ``ValueError`` naming the events."""
        if callback.event not in EVENTS:
            from hermes.errors import did_you_mean

            raise ValueError(f"unknown hook event {callback.event!r}"
                             f"{did_you_mean(callback.event, EVENTS)}; events: "
                             f"{', '.join(EVENTS)}")
        self._callbacks.setdefault(callback.event, []).append(callback)

    def has(self, event: str) -> bool:
        return bool(self._callbacks.get(event))

    def callbacks(self, event: str) -> list[Callback]:
        return list(self._callbacks.get(event, ()))

    def emit(self, event: str, **kwargs: Any) -> list[Any]:
        """Run ``event``'s callbacks in order; their answers that are not None. A failing
        callback is logged and skipped (``HookFailed`` on a blocking event)."""
        answers = []
        for callback in self._callbacks.get(event, ()):
            answer = self._run(callback, kwargs)
            if answer is not None:
                answers.append(answer)
        return answers

    def decide_tool(self, tool_name: str, arguments: Any, **kwargs: Any) -> ToolDecision:
        """Ask the ``pre_tool_call`` callbacks in order: each sees the arguments as the
        ones before it left them; the first ``block`` ends it. Fails closed."""
        for callback in self._callbacks.get("pre_tool_call", ()):
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
        timeout = callback.timeout if callback.timeout is not None else self.timeout
        try:
            return call_with_timeout(callback.function, dict(kwargs), timeout)
        except CallTimedOut:
            problem = f"hook {callback.owner} ({callback.event}) took more than {timeout:g} s"
            self.logger.warning(problem)
        except Exception as exc:  # a plugin's bug must not break the turn
            problem = f"hook {callback.owner} ({callback.event}) failed: " \
                      f"{type(exc).__name__}: {exc}"
            self.logger.warning(problem, exc_info=exc)
        if callback.event in BLOCKING:
            raise HookFailed(problem)
        return None


def call_with_timeout(function: Callable[..., Any], kwargs: dict[str, Any],
                      timeout: float) -> Any:
    """``function(**kwargs)`` in a daemon thread (with this context's variables); its
    result, its exception, or ``CallTimedOut`` after ``timeout`` seconds (the thread is
    left to finish on its own). A coroutine it returns is run to completion there."""
    import asyncio  # not at the top: ``hermes plugins list`` reads EVENTS, nothing more
    import inspect

    box: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            value = context.run(function, **kwargs)
            box["value"] = asyncio.run(value) if inspect.iscoroutine(value) else value
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="hook", daemon=True).start()
    if not done.wait(timeout):
        raise CallTimedOut(timeout)
    if "error" in box:
        raise box["error"]
    return box.get("value")


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
