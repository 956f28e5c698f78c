"""Our agent's events as ACP session updates: tool calls and their results, plans, history.

A tool call shows in the editor from the moment it starts (``tool_call``, status
``in_progress``, with its kind, a title and the files it touches) until it ends
(``tool_call_update``, ``completed`` or ``failed``, with its result as text and, for
edits, a diff). The ``todo`` tool's list is also sent as the editor's plan. A loaded
session's stored messages are replayed with the same updates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
    UserMessageChunk,
)

from hermes.agent.loop import GRACE_NOTE, INTERRUPTED_NOTE
from hermes.models.types import ToolCall
from hermes.tools.results import is_error, readable

Update = ToolCallStart | ToolCallProgress | AgentPlanUpdate | AgentMessageChunk | UserMessageChunk
"""What a replayed history consists of (live turns also stream thoughts)."""

TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read", "skill_view": "read", "skills_list": "read", "fact_recall": "read",
    "write_file": "edit", "patch": "edit", "skill_manage": "edit",
    "search_files": "search", "session_search": "search",
    "terminal": "execute", "process": "execute",
    "todo": "think", "clarify": "think",
}
"""How the editor draws each tool (its icon and grouping); others are ``other``."""
VERBS = {"read_file": "Read", "write_file": "Write", "patch": "Edit"}
NOT_SHOWN = (GRACE_NOTE, INTERRUPTED_NOTE)
"""Messages the runtime wrote into the transcript, not the user or the model."""


def arguments_of(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as an object (``{}`` when they do not parse)."""
    try:
        parsed = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def title_of(name: str, args: dict[str, Any]) -> str:
    """One line saying what the call does: the command, or the verb and its file."""
    if name == "terminal" and args.get("command"):
        return str(args["command"])
    if name in VERBS and args.get("path"):
        return f"{VERBS[name]} {args['path']}"
    if name == "search_files" and args.get("pattern"):
        return f"Search {args['pattern']}"
    return name


def _absolute(path: Any, cwd: Path) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    return os.path.normpath(cwd / Path(path).expanduser())


def locations_of(args: dict[str, Any], cwd: Path) -> list[ToolCallLocation] | None:
    """The file a call touches, for the editor's follow-along."""
    path = _absolute(args.get("path"), cwd)
    return [ToolCallLocation(path=path)] if path else None


def call_started(call: ToolCall, cwd: Path) -> ToolCallStart:
    args = arguments_of(call)
    return start_tool_call(call.id, title_of(call.name, args),
                           kind=TOOL_KINDS.get(call.name, "other"), status="in_progress",
                           locations=locations_of(args, cwd), raw_input=args)


def call_finished(call: ToolCall, content: str, failed: bool, cwd: Path) -> ToolCallProgress:
    """The call's end: its result as text and, for a successful edit, the change."""
    args = arguments_of(call)
    shown = [tool_content(text_block(readable(content)))]
    diff = None if failed else _diff_of(call.name, args, cwd)
    return update_tool_call(call.id, status="failed" if failed else "completed",
                            content=[diff, *shown] if diff else shown,
                            raw_output=raw_output_of(content))


def raw_output_of(content: str) -> dict[str, Any]:
    """The result as a JSON object: the schema leaves ``rawOutput`` open, but the SDK
    editors still ship (``@zed-industries/agent-client-protocol`` 0.4.x) refuses the whole
    update unless it is an object. A result that is an object is sent as it is; any other
    result as ``{"output": text}``."""
    try:
        parsed = json.loads(content)
    except ValueError:
        return {"output": content}
    return parsed if isinstance(parsed, dict) else {"output": content}


def _diff_of(name: str, args: dict[str, Any], cwd: Path) -> Any:
    path = _absolute(args.get("path"), cwd)
    if path is None:
        return None
    if name == "write_file" and isinstance(args.get("content"), str):
        return tool_diff_content(path, args["content"])
    if name == "patch" and isinstance(args.get("new_string"), str):
        return tool_diff_content(path, args["new_string"], args.get("old_string"))
    return None


def plan_of(content: str) -> AgentPlanUpdate | None:
    """The ``todo`` tool's list (its result) as the editor's plan; None for an error."""
    try:
        data = json.loads(content)
    except ValueError:
        return None
    todos = data.get("todos") if isinstance(data, dict) else None
    if not isinstance(todos, list):
        return None
    return update_plan([plan_entry(str(item.get("content", "")), status=item["status"])
                        for item in todos if isinstance(item, dict)
                        and item.get("status") in ("pending", "in_progress", "completed")])


def history(messages: list[dict[str, Any]], cwd: Path) -> Iterator[Update]:
    """A stored transcript (``SessionStore.messages``) as the updates that showed it."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) and content not in NOT_SHOWN else ""
        if role == "user" and text:
            yield update_user_message_text(text)
        elif role == "assistant":
            if text:
                yield update_agent_message_text(text)
            for raw in message.get("tool_calls") or ():
                call = calls[str(raw.get("id"))] = _stored_call(raw)
                yield call_started(call, cwd)
        elif role == "tool" and str(message.get("tool_call_id")) in calls:
            call = calls.pop(str(message.get("tool_call_id")))
            yield from finished_updates(call, text, is_error(text), cwd)


def finished_updates(call: ToolCall, content: str, failed: bool,
                     cwd: Path) -> Iterator[ToolCallProgress | AgentPlanUpdate]:
    """A call's end, then (for the ``todo`` tool) the plan it left."""
    yield call_finished(call, content, failed, cwd)
    plan = plan_of(content) if call.name == "todo" and not failed else None
    if plan is not None:
        yield plan


def _stored_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    return ToolCall(str(raw.get("id", "")), str(function.get("name", "")),
                    str(function.get("arguments") or "{}"))
