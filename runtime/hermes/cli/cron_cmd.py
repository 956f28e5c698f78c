"""``hermes cron list | add | edit | pause | resume | remove | run | tick``.

Thin: compose the config, change the jobs through ``hermes.cron.manage.Jobs`` (every
change checked first), render. Only ``run`` and ``tick`` build a runtime (they run the
agent); the others import neither litellm nor docker.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer

from hermes.cli.app import new_app, out, state

if TYPE_CHECKING:
    from hermes.cron.jobs import Job
    from hermes.cron.manage import Jobs
    from hermes.cron.service import Report

app = new_app("Scheduled jobs: prompts the agent runs on a schedule, each in a fresh session, "
              "their answers saved under cron/output/ and delivered (a chat, a platform's "
              "home channel, or only the file). The gateway runs them when due; without "
              "one, `hermes cron tick` does (a system timer).")
REF = typer.Argument(..., help="The job's id (or its name, when no other job has it).")
OVERRIDES = typer.Argument(None, help="Hydra overrides for this run, e.g. "
                           "provider.model=gpt-4o-mini.")
SCHEDULE_HELP = ('30m, 2h or 1d (once, from now); "every 2h"; a cron expression such as '
                 '"0 9 * * 1-5"; or a time such as 2030-01-31T09:00 (once).')
DELIVER_HELP = ("local (the output file only; the default), a platform's name (its "
                "home_channel) or platform:chat_id[:thread].")


def _jobs(ctx: typer.Context) -> Jobs:
    from hermes.cron.manage import profile_jobs

    st = state(ctx)
    return profile_jobs(st.home(), st.environ)


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """Every job: schedule, state, next and last run, how the last run went, where it
    delivers."""
    jobs = _jobs(ctx)
    listed = jobs.list()
    if not listed:
        out('no jobs; add one: hermes cron add "every 1d" "Summarise what changed"')
        return
    rows = [("ID", "NAME", "SCHEDULE", "STATE", "NEXT RUN", "LAST RUN", "STATUS", "DELIVER")]
    rows += [(j.id, j.name, jobs.describe(j), j.state, jobs.when(j.next_run), jobs.when(j.last_run),
              _status(j), j.deliver) for j in listed]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            .rstrip())
    for job in listed:
        if job.last_error:
            out(f"{job.id}: {job.last_error}")


@app.command()
def add(
    ctx: typer.Context,
    schedule: str = typer.Argument(..., help=SCHEDULE_HELP),
    prompt: str = typer.Argument(..., help="What each run asks the agent (self-contained: "
                                 "nobody can answer its questions)."),
    name: str = typer.Option("", "--name", "-n", help="A short name (default: the start of "
                             "the prompt)."),
    deliver: str = typer.Option("local", "--deliver", "-d", help=DELIVER_HELP),
    skills: list[str] = typer.Option([], "--skill", "-s", help="A skill each run loads "
                                     "(repeat for more)."),
    repeat: int | None = typer.Option(None, "--repeat", min=1, help="Runs in all, then the "
                                      "job is completed (default: until removed)."),
) -> None:
    """Schedule a prompt."""
    from hermes.cron.manage import NewJob

    jobs = _jobs(ctx)
    job = jobs.create(NewJob(prompt=prompt, schedule=schedule, name=name, deliver=deliver,
                             skills=skills, repeat=repeat))
    out(f"added job {job.id} ({job.name}): {jobs.describe(job)}, next run "
        f"{jobs.when(job.next_run)}, delivers to {job.deliver}")


@app.command()
def edit(
    ctx: typer.Context,
    ref: str = REF,
    schedule: str | None = typer.Option(None, "--schedule", help=SCHEDULE_HELP),
    prompt: str | None = typer.Option(None, "--prompt", help="The new prompt."),
    name: str | None = typer.Option(None, "--name", "-n", help="The new name."),
    deliver: str | None = typer.Option(None, "--deliver", "-d", help=DELIVER_HELP),
    skills: list[str] = typer.Option([], "--skill", "-s", help="The job's skills, replacing "
                                     "the old ones (repeat for more)."),
    no_skills: bool = typer.Option(False, "--no-skills", help="Load no skills."),
    repeat: int | None = typer.Option(None, "--repeat", min=1, help="Runs in all (counted "
                                      "again from a new schedule)."),
) -> None:
    """Change a job (a new schedule starts over from now; a completed job runs again)."""
    changes: dict[str, Any] = {key: value for key, value in (
        ("schedule", schedule), ("prompt", prompt), ("name", name), ("deliver", deliver),
        ("repeat", repeat)) if value is not None}
    if skills or no_skills:
        changes["skills"] = [] if no_skills else skills
    if not changes:
        from hermes.errors import UserError

        raise UserError("nothing to change: pass --schedule, --prompt, --name, --deliver, "
                        "--skill, --no-skills or --repeat")
    jobs = _jobs(ctx)
    job = jobs.edit(ref, changes)
    out(f"changed job {job.id} ({job.name}): {jobs.describe(job)}, {job.state}, next run "
        f"{jobs.when(job.next_run)}, delivers to {job.deliver}")


@app.command()
def pause(ctx: typer.Context, ref: str = REF) -> None:
    """Stop running a job until it is resumed."""
    job = _jobs(ctx).pause(ref)
    out(f"paused job {job.id} ({job.name})")


@app.command()
def resume(ctx: typer.Context, ref: str = REF) -> None:
    """Run a paused job on its schedule again (slots missed meanwhile are skipped)."""
    jobs = _jobs(ctx)
    job = jobs.resume(ref)
    out(f"resumed job {job.id} ({job.name}): next run {jobs.when(job.next_run)}")


@app.command()
def remove(ctx: typer.Context, ref: str = REF) -> None:
    """Delete a job (its outputs under cron/output/ stay)."""
    job = _jobs(ctx).remove(ref)
    out(f"removed job {job.id} ({job.name})")


@app.command()
def run(ctx: typer.Context, ref: str = REF, overrides: list[str] | None = OVERRIDES) -> None:
    """Run a job now, whatever its schedule or state, and deliver its answer; its schedule
    is unchanged."""
    reports = _running(ctx, overrides, lambda cron, deliver: [cron.run_now(ref, deliver)])
    _exit(reports)


@app.command()
def tick(ctx: typer.Context, overrides: list[str] | None = OVERRIDES) -> None:
    """Run the jobs that are due, once (for a system timer where no gateway runs); exit
    status 1 when a run failed."""
    reports = _running(ctx, overrides, lambda cron, deliver: cron.tick(deliver),
                       require_key=False)
    if not reports:
        out("no job is due")
    _exit(reports)


def _running(ctx: typer.Context, overrides: Sequence[str] | None, what: Any,
             require_key: bool = True) -> list[Report]:
    """``what(cron service, deliver)`` in a runtime of this profile. A provider without
    its key is refused before anything starts (``run``), or — ``require_key=False``, for
    ``tick`` — fails each due job with that line (nothing due: nothing to refuse)."""
    from hermes.config import compose_config
    from hermes.container import open_runtime
    from hermes.gateway.cron_send import direct_deliver

    st = state(ctx)
    home = st.home()
    composed = compose_config(home, st.environ, list(overrides or ()))
    with open_runtime(home, composed.config, st.environ, raw=composed.raw,
                      require_key=require_key) as runtime:
        reports: list[Report] = what(runtime.container.cron(),
                                     direct_deliver(runtime, logging.getLogger("hermes.cron")))
    for report in reports:
        out(_report(report))
    return reports


def _report(report: Report) -> str:
    job, outcome = report.job, report.outcome
    where = f", delivered to {report.delivered_to}" if report.delivered_to else ""
    line = f"job {job.id} ({job.name}): {report.status}{where}"
    if outcome.output is not None:
        line += f"; output {outcome.output}"
    if report.status in ("error", "undelivered"):
        line += f"; {outcome.error or report.delivery_error}"
    return line


def _exit(reports: Sequence[Report]) -> None:
    if any(report.status in ("error", "undelivered") for report in reports):
        raise typer.Exit(1)


def _status(job: Job) -> str:
    if job.last_status == "running":
        return f"running (pid {job.running_pid})"
    return job.last_status or "-"
