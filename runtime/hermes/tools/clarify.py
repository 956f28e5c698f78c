"""Toolset ``clarify``: ask the user a question in an interactive chat."""

from __future__ import annotations

from typing import Any

from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import ok

MAX_CHOICES = 6


def clarify(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    if not ctx.interactive or ctx.clarify is None:
        raise ToolError("nobody can answer questions in this non-interactive run; make a "
                        "reasonable assumption, say which, and continue")
    choices = args.get("choices") or None
    if choices is not None and len(choices) > MAX_CHOICES:
        raise ToolError(f"give at most {MAX_CHOICES} choices")
    answer = ctx.clarify(args["question"], choices, ctx.cancelled)
    return ok(question=args["question"], answer=answer)


def clarify_tool() -> ToolSpec:
    """``clarify``: one question, optionally with choices."""
    schema = object_schema(
        ("question",),
        question={"type": "string"},
        choices={"type": "array", "items": {"type": "string"},
                 "description": f"Up to {MAX_CHOICES} suggested answers."},
    )
    return ToolSpec("clarify", "clarify", "Ask the user a clarifying question when the task "
                    "is ambiguous; returns their answer.", schema, clarify)
