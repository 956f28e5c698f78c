"""Toolset ``todo``: the session's task list, kept on the context's session state."""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import TodoItem, TodoStatus, ToolContext
from hermes.tools.results import ok

STATUSES = ("pending", "in_progress", "completed")


def todo(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    items = args.get("todos")
    if items is not None:
        current = ctx.state.todos if args.get("merge", False) else []
        ctx.state.todos = _apply(current, items)
    todos = ctx.state.todos
    counts = Counter[str](item.status for item in todos)
    return ok(todos=[vars(item) for item in todos],
              summary={status: counts.get(status, 0) for status in STATUSES})


def _apply(current: list[TodoItem], updates: list[dict[str, Any]]) -> list[TodoItem]:
    """``current`` with ``updates`` merged in by id; new ids are appended."""
    by_id = {item.id: TodoItem(item.id, item.content, item.status) for item in current}
    for update in updates:
        item_id = str(update["id"])
        existing = by_id.get(item_id)
        if existing is None:
            if not update.get("content"):
                raise ToolError(f'todo "{item_id}" is new and needs a content')
            by_id[item_id] = TodoItem(item_id, update["content"],
                                      cast(TodoStatus, update.get("status", "pending")))
            continue
        existing.content = update.get("content") or existing.content
        existing.status = cast(TodoStatus, update.get("status", existing.status))
    return list(by_id.values())


def todo_tool() -> ToolSpec:
    """``todo``: read the list (no arguments) or write it."""
    item = {"type": "object", "required": ["id"], "additionalProperties": False, "properties": {
        "id": {"type": "string"}, "content": {"type": "string"},
        "status": {"type": "string", "enum": list(STATUSES)},
    }}
    schema = object_schema(
        todos={"type": "array", "items": item, "description": "Items to write; omit to read."},
        merge={"type": "boolean", "description": "Update items by id instead of replacing "
                                                 "the whole list."},
    )
    return ToolSpec("todo", "todo", "Keep a task list for this session: statuses pending, "
                    "in_progress, completed. Call without arguments to read it.", schema, todo)
