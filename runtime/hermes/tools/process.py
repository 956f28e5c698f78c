"""Toolset ``process``: manage background jobs started with ``terminal(background=true)``."""

from __future__ import annotations

from typing import Any

from hermes.environments.base import CommandResult
from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.processes import Job
from hermes.tools.results import ok
from hermes.tools.terminal import sandbox_fields

DEFAULT_WAIT = 30.0
MAX_WAIT = 600.0
DEFAULT_LOG_LINES = 200
OUTPUT_TAIL_CHARS = 8000
ACTIONS = ("list", "poll", "log", "kill", "wait")


def _tail(text: str, chars: int = OUTPUT_TAIL_CHARS) -> str:
    return text if len(text) <= chars else f"[... {len(text) - chars} characters]\n" + text[-chars:]


def process(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
    action = args["action"]
    if action == "list":
        return ok(processes=[job.describe() for job in ctx.processes.jobs()])
    if not args.get("id"):
        raise ToolError(f'action "{action}" needs the id of a process (see action="list")')
    job = ctx.processes.get(args["id"])
    if action == "poll":
        output = job.new_output()
        return ok(**job.describe(), new_output=_tail(output), **_sandbox(ctx, job, output))
    if action == "log":
        lines = job.output().splitlines()[-max(1, args.get("lines", DEFAULT_LOG_LINES)):]
        return ok(**job.describe(), output="\n".join(lines))
    if action == "kill":
        job.process.kill()
        return ok(**job.describe())
    timeout = min(float(args.get("timeout", DEFAULT_WAIT)), MAX_WAIT)
    finished = job.process.wait(timeout) is not None
    output = job.new_output()
    return ok(**job.describe(), timed_out=not finished, new_output=_tail(output),
              **_sandbox(ctx, job, output))


def _sandbox(ctx: ToolContext, job: Job, output: str) -> dict[str, str]:
    """The environment's note on a job that failed (a sandbox that refused it)."""
    code = job.process.poll()
    return sandbox_fields(ctx, CommandResult(code, output)) if code else {}


def process_tool() -> ToolSpec:
    """``process``: list, poll, log, kill or wait for background jobs."""
    schema = object_schema(
        ("action",),
        action={"type": "string", "enum": list(ACTIONS),
                "description": "list: all jobs; poll: status and new output; log: last lines; "
                               "kill: stop it; wait: block until it exits or timeout."},
        id={"type": "string", "description": "Process id from terminal(background=true)."},
        timeout={"type": "number", "description": f"wait: seconds (default {DEFAULT_WAIT:.0f})."},
        lines={"type": "integer", "description": f"log: lines (default {DEFAULT_LOG_LINES})."},
    )
    return ToolSpec("process", "process", "Manage background processes started by terminal.",
                    schema, process)
