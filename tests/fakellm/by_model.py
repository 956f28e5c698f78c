"""Responders that answer by the request's model name, so arms of an experiment (or any
concurrent clients) behave differently without sharing one ordered script.

    llm = FakeLLM(fallback=by_model({
        "good": answer("4"),
        "tooly": tool_then_answer("terminal", {"command": "ls"}, "done"),
        "slow": answer("late", delay=5),
    }))

Each responder is stateless: it decides from the request alone (a conversation that
already holds tool results gets the final answer), so it serves any number of runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from .recording import RecordedRequest
from .script import Reply, Responder, ToolCall, Turn, Usage


def by_model(behaviours: Mapping[str, Responder], default: Responder | None = None) -> Responder:
    """Answer each request with the responder of its model (``KeyError`` if none)."""

    def respond(request: RecordedRequest) -> Turn:
        model = request.model or ""
        responder = behaviours.get(model) or behaviours.get(model.split("/")[-1]) or default
        if responder is None:
            raise KeyError(f"fake LLM: no behaviour for model {model!r}; "
                           f"known: {sorted(behaviours)}")
        return responder(request)

    return respond


def answer(text: str | Callable[[RecordedRequest], str], *, delay: float = 0.0,
           usage: Usage | None = None) -> Responder:
    """Always answer ``text`` (or ``text(request)``)."""

    def respond(request: RecordedRequest) -> Turn:
        body = text(request) if callable(text) else text
        return Reply(text=body, delay=delay, usage=usage or Usage())

    return respond


def tool_then_answer(name: str, arguments: Mapping[str, Any], text: str, *,
                     usage: Usage | None = None) -> Responder:
    """Call tool ``name`` first; once its result is in the conversation, answer ``text``."""

    def respond(request: RecordedRequest) -> Turn:
        if request.tool_results:
            return Reply(text=text, usage=usage or Usage())
        return Reply(tool_calls=[ToolCall(name, dict(arguments))], usage=usage or Usage())

    return respond


def held_while(word: str, release: threading.Event, text: str, *,
               timeout: float = 60.0) -> Responder:
    """Answer ``text``; a request whose last user message holds ``word`` first waits
    until ``release`` is set (at most ``timeout`` seconds): a turn in flight, on cue."""

    def respond(request: RecordedRequest) -> Turn:
        if word in (request.last_user_text or ""):
            release.wait(timeout)
        return Reply(text=text)

    return respond
