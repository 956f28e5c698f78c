"""The ``memory`` tool (toolset ``memory``): add, replace or remove entries of
MEMORY.md (``target: memory``) and USER.md (``target: user``), one operation
or a batch (``operations``) applied all or nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes.errors import ToolError
from hermes.memory.edits import (
    FILES,
    MemoryEditError,
    Operation,
    Target,
    char_count,
    refusal_line,
)
from hermes.memory.store import EntryStore, display_entries
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.results import error, ok

DESCRIPTION = (
    "Save durable knowledge across sessions. target=memory: your own notes (environment "
    "facts, project conventions, tool quirks, lessons learned); target=user: who the user is "
    "(preferences, role, communication style). Keep entries short and factual; never store "
    "instructions, secrets or one-off task details. add needs content; replace needs old_text "
    "(a short unique part of the entry) and content; remove needs old_text. Pass operations "
    "to apply several at once, all or nothing. Both files have character limits: when one "
    "is full, merge or remove entries first. Saved entries reach your system prompt from "
    "the next session on."
)


OPERATION_KEYS = ("action", "target", "content", "old_text")


def _operation_schema() -> dict[str, Any]:
    return {
        "action": {"type": "string", "enum": ["add", "replace", "remove"],
                   "description": "What to do with one entry."},
        "target": {"type": "string", "enum": list(FILES),
                   "description": "memory: your notes (MEMORY.md); user: the user (USER.md)."},
        "content": {"type": "string", "description": "The entry's new text (add, replace)."},
        "old_text": {"type": "string",
                     "description": "A short unique part of the entry to replace or remove."},
    }


def memory_tool(store: EntryStore) -> ToolSpec:
    """The ``memory`` tool over ``store``."""
    single = _operation_schema()
    item = {"type": "object", "properties": single, "required": ["action", "target"],
            "additionalProperties": False}
    schema = object_schema(**single, operations={
        "type": "array", "items": item,
        "description": "Several operations applied in order, all or nothing "
                       "(instead of action/target/content/old_text)."})

    def handle(args: dict[str, Any], **_: Any) -> str:
        return run_memory_tool(store, args)

    return ToolSpec("memory", "memory", DESCRIPTION, schema, handle)


def run_memory_tool(store: EntryStore, args: dict[str, Any]) -> str:
    """Apply the requested operations; the result lists the touched files' entries."""
    operations = parse_operations(args)
    try:
        outcome = store.apply(operations)
    except MemoryEditError as exc:
        listing = _listing(store, [exc.target]) if exc.target else {}
        return error(refusal_line(exc), **listing)
    touched = list(dict.fromkeys(op.target for op in operations))
    note = ("saved; your system prompt shows it from the next session" if outcome.changed
            else "nothing changed")
    return ok(success=True, done=outcome.notes, note=note, **_listing(store, touched))


def parse_operations(args: dict[str, Any]) -> list[Operation]:
    """The operations of one call: ``operations`` or the single-operation arguments."""
    batch = args.get("operations")
    single: dict[str, Any] = {key: args[key] for key in OPERATION_KEYS if key in args}
    if batch is not None:
        if single:
            raise ToolError("pass either operations or action/target/..., not both")
        if not batch:
            raise ToolError("operations is empty; give at least one operation")
        return [_operation(item) for item in batch]
    if "action" not in single or "target" not in single:
        raise ToolError("missing required arguments action and target (or operations)")
    return [_operation(single)]


def _operation(item: Mapping[str, Any]) -> Operation:
    return Operation(action=item["action"], target=item["target"],
                     content=str(item.get("content") or ""),
                     old_text=str(item.get("old_text") or ""))


def _listing(store: EntryStore, targets: Sequence[Target]) -> dict[str, Any]:
    """Current entries and usage of ``targets``, keyed by target, as the model sees them."""
    listing: dict[str, Any] = {}
    for target in targets:
        entries = store.entries(target)
        listing[target] = {
            "file": FILES[target], "entries": display_entries(entries, target),
            "usage": f"{char_count(entries):,}/{store.limits[target]:,} chars",
        }
    return listing
