"""Scripts as JSON, for ``python -m tests.fakellm --script FILE``.

The file holds a list of turns, or ``{"turns": [...], "fallback": turn}`` where the
fallback answers every request after the last turn (handy for benchmarks). A turn is::

    {"text": "hi", "tool_calls": [{"name": "f", "arguments": {"x": 1}}], "reasoning": "...",
     "usage": {"input_tokens": 10, "cached_tokens": 4}, "max_tokens_reached": false, "delay": 0}
    {"fault": "rate_limit", "retry_after": 1}     # any Fault constructor by name
    {"fault": {"status": 418, "message": "..."}}  # or the Fault fields themselves
    {"truncated": {"text": "cut"}, "after_events": 3}
    {"stream_error": "overloaded", "reply": {"text": "fails"}, "after_events": 3}

``{"by_model": {"gpt-4o": turn, "gpt-4o-mini": turn}}`` as the whole file (or beside
``turns``) answers every request after the turns by its model's turn, so that the arms
of ``hermes ab provider.model=gpt-4o,gpt-4o-mini`` answer differently.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from .script import Fault, Reply, Responder, StreamError, ToolCall, Truncated, Turn, Usage

FAULTS = ("rate_limit", "server_error", "unavailable", "overloaded", "authentication",
          "payment_required", "model_not_found", "context_length_exceeded")


def load_script(path: Path) -> tuple[list[Turn], Responder | None]:
    """The turns and fallback a JSON script file describes."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [turn_from_json(item) for item in data], None
    turns = [turn_from_json(item) for item in data.get("turns", [])]
    if "by_model" in data:
        from .by_model import by_model

        per_model = {name: turn_from_json(turn) for name, turn in data["by_model"].items()}
        return turns, by_model({name: (lambda _r, t=turn: t)
                                for name, turn in per_model.items()})
    fallback = turn_from_json(data["fallback"]) if "fallback" in data else None
    return turns, (lambda _request: fallback) if fallback is not None else None


def turn_from_json(item: dict[str, Any]) -> Turn:
    if "fault" in item:
        return _fault(item["fault"], item)
    if "stream_error" in item:
        return StreamError(_fault(item["stream_error"], item), _reply(item.get("reply", {})),
                           item.get("after_events", 3), item.get("delay", 0.0))
    if "truncated" in item:
        return Truncated(_reply(item["truncated"]), item.get("after_events", 3),
                         item.get("delay", 0.0))
    return _reply(item)


def _fault(spec: str | dict[str, Any], item: dict[str, Any]) -> Fault:
    if isinstance(spec, dict):
        return Fault(**spec)
    if spec not in FAULTS:
        raise ValueError(f"fake LLM script: unknown fault {spec!r}; expected one of {FAULTS}")
    fault: Fault = getattr(Fault, spec)()
    if "retry_after" in item:
        fault = replace(fault, retry_after=item["retry_after"])
    return replace(fault, delay=item.get("delay", 0.0))


def _reply(item: dict[str, Any]) -> Reply:
    calls = tuple(ToolCall(c["name"], c.get("arguments", {}), c.get("id"))
                  for c in item.get("tool_calls", []))
    return Reply(text=item.get("text"), tool_calls=calls, reasoning=item.get("reasoning"),
                 usage=Usage(**item.get("usage", {})),
                 max_tokens_reached=item.get("max_tokens_reached", False),
                 delay=item.get("delay", 0.0))
