"""Toolset ``terminal``: run a shell command in the execution environment.

Every command passes the approval check first (``approval.check_command``).
Foreground commands run with a timeout; ``background=true`` starts a job in
the context's ``ProcessTable`` for the ``process`` tool to manage (offered
only when that tool is enabled too).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from hermes.environments.base import CommandResult
from hermes.errors import SandboxError, ToolError
from hermes.tools.approval import check_command
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import error, ok

MAX_TIMEOUT = 3600.0


def process_log_dir(ctx: ToolContext) -> Path:
    """Where background jobs write their output."""
    return (ctx.spill_dir or ctx.home.path / "tool_results" / ctx.session_id) / "processes"


def terminal(args: dict[str, Any], *, ctx: ToolContext, background_allowed: bool,
             **_: Any) -> str:
    command: str = args["command"]
    if not command.strip():
        raise ToolError("command is empty")
    refusal = check_command(command, ctx)
    if refusal is not None:
        return error(refusal, command=command)
    try:
        if args.get("background", False):
            if not background_allowed:
                raise ToolError("background jobs need the process tool; enable the "
                                "process toolset")
            job = ctx.processes.start(ctx.environment, command, process_log_dir(ctx))
            return ok(process_id=job.id, pid=job.process.pid, status="running",
                      note=f'check on it with process(action="poll", id="{job.id}")')
        timeout = min(float(args["timeout"]), MAX_TIMEOUT) if args.get("timeout") else None
        result = ctx.environment.run(command, timeout=timeout, cancelled=ctx.cancelled)
    except SandboxError as exc:
        raise ToolError(f"the {ctx.environment.kind} environment failed: {exc}") from exc
    extra: dict[str, Any] = {}
    if result.timed_out:
        extra = {"timed_out": True, "note": "the command was killed at its timeout; use "
                 "background=true for long-running commands"}
    elif result.cancelled:
        extra = {"cancelled": True, "note": "the user interrupted; the command was stopped"}
    return ok(output=result.output, exit_code=result.exit_code, **extra,
              **sandbox_fields(ctx, result))


def sandbox_fields(ctx: ToolContext, result: CommandResult) -> dict[str, str]:
    """``sandbox``: why a failed command may have been refused by the environment, and
    (once per session) that commands run unconfined."""
    notes = []
    if not ctx.state.environment_noticed:
        ctx.state.environment_noticed = True
        notes.append(ctx.environment.notice())
    if result.exit_code != 0:
        notes.append(ctx.environment.failure_note(result))
    found = [note for note in notes if note]
    return {"sandbox": " ".join(found)} if found else {}


def terminal_tool(background: bool) -> ToolSpec:
    """``terminal``; with ``background`` it also accepts ``background=true``."""
    properties: dict[str, Any] = {
        "command": {"type": "string", "description": "Shell command to run."},
        "timeout": {"type": "number", "description": "Seconds before the command is killed."},
    }
    if background:
        properties["background"] = {"type": "boolean", "description": "Run in the background "
                                    "and return a process id for the process tool."}
    return ToolSpec("terminal", "terminal", "Run a shell command and return its combined "
                    "output and exit code. Dangerous commands need the user's approval.",
                    object_schema(("command",), **properties),
                    partial(terminal, background_allowed=background))
