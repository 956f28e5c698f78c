"""Make a transcript valid before sending it: the model never sees a broken sequence.

- tool results whose call is not in the preceding assistant turn are dropped;
- assistant tool calls without a result get a stub result;
- consecutive user messages are merged, as are consecutive plain assistant messages.
The input is never changed; a repaired copy is returned.
"""

from __future__ import annotations

from typing import Any

MISSING_RESULT = "[no result: the call was interrupted or lost]"


def repair_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    repaired: list[dict[str, Any]] = []
    pending: list[str] = []  # ids of the last assistant turn's calls still awaiting a result
    for message in messages:
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") in pending:
                pending.remove(message["tool_call_id"])
                repaired.append(dict(message))
            continue  # an orphan: its call is not in the preceding assistant turn
        _stub(repaired, pending)
        pending = []
        if repaired and _mergeable(repaired[-1], message):
            repaired[-1] = _merge(repaired[-1], message)
            continue
        repaired.append(dict(message))
        if role == "assistant":
            pending = [c["id"] for c in message.get("tool_calls") or []]
    _stub(repaired, pending)
    return repaired


def _stub(repaired: list[dict[str, Any]], pending: list[str]) -> None:
    for call_id in pending:
        repaired.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT})


def _mergeable(previous: dict[str, Any], message: dict[str, Any]) -> bool:
    role = message.get("role")
    if role != previous.get("role") or role not in ("user", "assistant"):
        return False
    if role == "assistant" and (previous.get("tool_calls") or message.get("tool_calls")):
        return False
    return isinstance(previous.get("content"), str) and isinstance(message.get("content"), str)


def _merge(previous: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    return {**previous, "content": f"{previous['content']}\n\n{message['content']}"}
