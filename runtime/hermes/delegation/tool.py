"""The ``delegate_task`` tool: its schema, and a handler that hands the call to the
session's ``Delegation`` (``ToolContext.delegate``)."""

from __future__ import annotations

from typing import Any

from hermes.config.delegation_schema import DelegationConfig
from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext

DESCRIPTION = (
    "Hand independent work to focused sub-agents and get back each one's summary, status "
    "(done, failed, budget_exhausted, interrupted) and cost. A sub-agent knows nothing of "
    "this conversation: give it a self-contained goal and the context it needs. Use a batch "
    "(tasks) for independent pieces of work: up to {concurrency} run at once. Sub-agents "
    "cannot ask the user questions, write memory, send messages or schedule jobs.")


def delegate(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    if ctx.delegate is None:
        raise ToolError("delegate_task works only inside an agent session; do the task "
                        "yourself")
    return ctx.delegate(args, ctx)


def task_properties(settings: DelegationConfig) -> dict[str, Any]:
    """The fields of one task (also accepted beside ``tasks`` for every task of it)."""
    fields: dict[str, Any] = {
        "goal": {"type": "string", "description": "What the sub-agent should achieve, "
                 "specific and self-contained."},
        "context": {"type": "string", "description": "What it needs to know: paths, error "
                    "messages, constraints, what was tried."},
        "toolsets": {"type": "array", "items": {"type": "string"}, "description": "Toolsets "
                     "it may use, within yours (e.g. [file] to only read and write files); "
                     "default: all of yours."},
        "max_iterations": {"type": "integer", "description": "Its budget of model calls; "
                           f"default and most: {settings.max_iterations}."},
    }
    if settings.acp_commands:
        fields["acp_command"] = {
            "type": "string", "description": "Run the task with an external agent over "
            "ACP instead, by its command line; its program must be one of: "
            + ", ".join(settings.acp_commands) + "."}
    return fields


def delegate_tool(settings: DelegationConfig | None = None) -> ToolSpec:
    """``delegate_task``: one task (``goal``...) or a batch (``tasks``)."""
    settings = settings or DelegationConfig()
    fields = task_properties(settings)
    task = {"type": "object", "required": ["goal"], "additionalProperties": False,
            "properties": fields}
    batch = {"type": "array", "items": task, "description": "A batch of tasks run in "
             "parallel (instead of goal); fields given beside it apply to every task."}
    return ToolSpec("delegate_task", "delegation",
                    DESCRIPTION.format(concurrency=settings.max_concurrency),
                    object_schema(**fields, tasks=batch), delegate)
