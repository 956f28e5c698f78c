"""Toolset ``cron``: the ``cronjob`` tool, with which the agent schedules work in its own
profile. A job the agent creates from a chat answers in that chat unless it says
otherwise; its prompt is scanned like a memory write (it will run later with nobody
watching). Cron runs themselves never get this toolset."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from hermes.cron.jobs import Job
from hermes.cron.manage import Jobs, NewJob
from hermes.errors import UserError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import error, ok

ACTIONS = ("create", "list", "pause", "resume", "remove")
DESCRIPTION = (
    "Schedule a prompt to run later or repeatedly in this profile (each run is a fresh "
    "session with your tools, its final answer delivered), and list, pause, resume or "
    "remove scheduled jobs. schedule: '30m', '2h' or '1d' (once, from now), 'every 2h' "
    "(repeating), a cron expression like '0 9 * * 1-5', or a time like "
    "'2030-01-31T09:00' (once). deliver: leave it out to answer in the current chat (a "
    "file when there is none); 'local' = a file only; a platform's name = its home "
    "channel; or 'platform:chat_id[:thread]'. A run answering [SILENT] is not delivered.")


def cronjob_tool(jobs: Jobs) -> ToolSpec:
    """``cronjob`` over the jobs of one profile."""
    text = {"type": "string"}
    schema = object_schema(
        ("action",),
        action={"type": "string", "enum": list(ACTIONS)},
        job_id={**text, "description": "The job (pause, resume, remove)."},
        prompt={**text, "description": "What each run is asked to do (create): "
                                       "self-contained, nobody can be asked questions."},
        schedule={**text, "description": "When (create)."},
        name={**text, "description": "A short name (create; optional)."},
        deliver={**text, "description": "Where answers go (create; optional)."},
        skills={"type": "array", "items": text, "description": "Skills each run loads."},
        repeat={"type": "integer", "minimum": 1,
                "description": "Runs in all, then the job completes (optional)."},
    )

    def handle(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> str:
        try:
            return _act(jobs, args, ctx)
        except UserError as exc:
            return error(str(exc))

    return ToolSpec("cronjob", "cron", DESCRIPTION, schema, handle)


def _act(jobs: Jobs, args: dict[str, Any], ctx: ToolContext) -> str:
    action = args["action"]
    if action == "list":
        return ok(jobs=[_summary(jobs, job) for job in jobs.list()])
    if action == "create":
        return ok(created=_summary(jobs, jobs.create(_new_job(args, ctx))))
    job_id = args.get("job_id")
    if not job_id:
        raise UserError(f"{action} needs job_id (action=list shows the jobs)")
    done = {"pause": jobs.pause, "resume": jobs.resume, "remove": jobs.remove}[action](job_id)
    return ok(**{action + "d": _summary(jobs, done)})


def _new_job(args: dict[str, Any], ctx: ToolContext) -> NewJob:
    from hermes.memory.scan import scan_text

    for key in ("prompt", "schedule"):
        if not str(args.get(key) or "").strip():
            raise UserError(f"create needs {key}")
    if reason := scan_text(args["prompt"]):
        raise UserError(f"prompt refused: {reason}")
    return NewJob(prompt=args["prompt"], schedule=args["schedule"], name=args.get("name", ""),
                  deliver=args.get("deliver"), skills=args.get("skills") or [],
                  repeat=args.get("repeat"), created_by="agent",
                  origin=asdict(ctx.origin) if ctx.origin is not None else None)


def _summary(jobs: Jobs, job: Job) -> dict[str, Any]:
    return {"id": job.id, "name": job.name, "schedule": jobs.describe(job),
            "state": job.state, "next_run": job.next_run, "deliver": job.deliver,
            "skills": job.skills, "repeat": job.repeat, "runs": job.runs,
            "last_run": job.last_run, "last_status": job.last_status,
            "last_error": job.last_error, "prompt": job.prompt}
