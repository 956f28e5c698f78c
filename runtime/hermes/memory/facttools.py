"""Tools of the fact store (toolset ``memory``): remember, recall and forget facts."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.results import ok

if TYPE_CHECKING:
    from hermes.memory.factstore import FactStore

MAX_RECALL = 50


def fact_tools(store: FactStore) -> list[ToolSpec]:
    """``fact_remember``, ``fact_recall`` and ``fact_forget`` over ``store``."""
    def remember(args: dict[str, Any], **_: Any) -> str:
        fact, created = store.remember(args["content"], args.get("tags") or "")
        return ok(id=fact.id, stored=created,
                  note="remembered" if created else "already known, nothing added")

    def recall(args: dict[str, Any], **_: Any) -> str:
        limit = max(1, min(int(args.get("limit") or 10), MAX_RECALL))
        facts = store.recall(args["query"], limit)
        return ok(facts=[asdict(fact) for fact in facts], count=len(facts))

    def forget(args: dict[str, Any], **_: Any) -> str:
        removed = store.forget(int(args["id"]))
        return ok(id=args["id"], removed=removed,
                  note="forgotten" if removed else "no fact has this id")

    return [
        ToolSpec("fact_remember", "memory",
                 "Save one durable, self-contained fact for later sessions (a name, a "
                 "decision, a detail of a project). Not for instructions or secrets.",
                 object_schema(("content",),
                               content={"type": "string", "description": "The fact."},
                               tags={"type": "string",
                                     "description": "Optional keywords that help find it."}),
                 remember),
        ToolSpec("fact_recall", "memory",
                 "Search the saved facts by words (any of them may match), best first.",
                 object_schema(("query",), query={"type": "string"},
                               limit={"type": "integer",
                                      "description": f"At most this many (1-{MAX_RECALL})."}),
                 recall, parallel_safe=True),
        ToolSpec("fact_forget", "memory", "Delete one saved fact by its id.",
                 object_schema(("id",), id={"type": "integer"}), forget),
    ]
