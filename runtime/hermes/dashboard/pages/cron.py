"""The Cron page: a profile's scheduled jobs (schedule, next and last run in the jobs'
zone, status), changed through the service ``hermes cron`` uses (``cron.manage.Jobs``:
the same checks, the same one-line refusals, the same ``cron/jobs.json``), each job's
runs (its ``cron/output/<job>/`` files) and their output.

"Run now" starts ``hermes cron run JOB`` in the profile's home and returns at once: the
run is the CLI's (the cron service, the one conversation path, the job's delivery), and
the job's page polls its status until the run has ended. A thread waits for each run, so
it is reaped when it ends whether or not a page polls. Stopping the dashboard leaves its
runs going (their own session, not sent the dashboard's Ctrl-C): each records its own end
in ``cron/jobs.json`` and its output file as a ``hermes cron run`` from a shell does, and
the system reaps it once the dashboard has gone.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from hermes.cron.jobs import Job
from hermes.cron.manage import EDITABLE, Jobs, NewJob, profile_jobs
from hermes.dashboard.notices import done, leave
from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError
from hermes.hints import for_profile

router = APIRouter()
PageOf = Annotated[Page, Depends(open_page)]
RUNS_SHOWN = 50


@dataclass
class Started:
    """A ``hermes cron run`` the page started."""

    process: subprocess.Popen[bytes]
    errors: IO[bytes]
    """Its standard error (a refusal is its last line)."""


@dataclass
class Runner:
    """The runs this dashboard started, by (profile, job id)."""

    started: dict[tuple[str, str], Started] = field(default_factory=dict)

    def start(self, page: Page, job: Job) -> None:
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - read and closed once it ended
        process = subprocess.Popen(
            [sys.executable, "-m", "hermes", "cron", "run", job.id],
            env=page.home.child_env(page.views.manager.environ), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True)
        self.started[(page.profile, job.id)] = Started(process, errors)
        threading.Thread(target=process.wait, name=f"cron-run-{job.id}", daemon=True).start()

    def state(self, profile: str, job_id: str) -> tuple[bool, str | None]:
        """Whether a run started here is still going; when it ended refused, its line."""
        run = self.started.get((profile, job_id))
        if run is None:
            return False, None
        if run.process.poll() is None:
            return True, None
        del self.started[(profile, job_id)]
        run.errors.seek(0)
        lines = run.errors.read().decode(errors="replace").strip().splitlines()
        run.errors.close()
        refused = run.process.returncode == 2 and lines
        return False, lines[-1].removeprefix("error: ") if refused else None


def runner(request: Request) -> Runner:
    """This dashboard's ``Runner`` (made on first use)."""
    state = request.app.state
    if not hasattr(state, "cron_runner"):
        state.cron_runner = Runner()
    found: Runner = state.cron_runner
    return found


@dataclass(frozen=True)
class JobRow:
    """A job as the page shows it (times in the jobs' zone, zone named)."""

    job: Job
    schedule: str
    next_run: str
    last_run: str
    created: str


def _row(jobs: Jobs, job: Job) -> JobRow:
    return JobRow(job, jobs.describe(job), jobs.when(job.next_run), jobs.when(job.last_run),
                  jobs.when(job.created_at or None))


def _jobs(page: Page) -> Jobs:
    return profile_jobs(page.home, page.views.manager.environ)


def _base(page: Page) -> str:
    return f"/p/{quote(page.profile)}/cron"


@router.get("/p/{profile}/cron", response_class=HTMLResponse)
def cron_page(page: PageOf) -> HTMLResponse:
    return _index(page)


def _index(page: Page, error: str | None = None, form: dict[str, str] | None = None,
           code: int = 200) -> HTMLResponse:
    try:
        jobs = _jobs(page)
        rows = [_row(jobs, job) for job in jobs.list()]
    except UserError as exc:
        rows, error = [], error or _said(page, exc)
    return page.render("cron/index.html", "cron", rows=rows, error=error, form=form or {},
                       base=_base(page), done=done(page.request),
                       code=code)


@router.post("/p/{profile}/cron", response_class=HTMLResponse)
async def add_job(page: PageOf) -> Response:
    form = await _form(page.request)
    try:
        jobs = _jobs(page)
        job = jobs.create(NewJob(prompt=form.get("prompt", ""),
                                 schedule=form.get("schedule", ""), name=form.get("name", ""),
                                 deliver=form.get("deliver", "").strip() or "local",
                                 skills=_skills(form.get("skills", "")),
                                 repeat=_count(form.get("repeat", ""))))
    except UserError as exc:
        return _index(page, _said(page, exc), form, 400)
    return _back(page, f"added job {job.id} ({job.name})")


@router.get("/p/{profile}/cron/{ref}", response_class=HTMLResponse)
def job_page(page: PageOf, ref: str) -> HTMLResponse:
    return _job_page(page, ref)


def _job_page(page: Page, ref: str, error: str | None = None,
              form: dict[str, str] | None = None, code: int = 200) -> HTMLResponse:
    jobs, job = _found(page, ref)
    values = {"prompt": job.prompt, "name": job.name, "schedule": job.schedule,
              "deliver": job.deliver, "skills": ", ".join(job.skills),
              "repeat": "" if job.repeat is None else str(job.repeat)} | (form or {})
    return page.render("cron/job.html", "cron", row=_row(jobs, job), runs=_runs(page, job),
                       error=error, form=values, base=_base(page),
                       status=_status(page, jobs, job),
                       done=done(page.request), code=code)


@router.post("/p/{profile}/cron/{ref}/edit", response_class=HTMLResponse)
async def edit_job(page: PageOf, ref: str) -> Response:
    form = await _form(page.request)
    jobs, job = _found(page, ref)
    try:
        changed = jobs.edit(job.id, _changes(job, form))
    except UserError as exc:
        return _job_page(page, job.id, _said(page, exc), form, 400)
    return _back(page, f"changed job {changed.id} ({changed.name})", changed.id)


@router.post("/p/{profile}/cron/{ref}/{action}", response_class=HTMLResponse)
async def act_on_job(page: PageOf, ref: str, action: str) -> Response:
    """``pause``, ``resume``, ``remove`` (as ``hermes cron ACTION``) or ``run``."""
    jobs, job = _found(page, ref)
    try:
        if action == "run":
            return _run(page, jobs, job)
        acts = {"pause": jobs.pause, "resume": jobs.resume, "remove": jobs.remove}
        if action not in acts:
            raise HTTPException(404, f"No action {action!r}: pause, resume, remove or run.")
        changed = acts[action](job.id)
    except UserError as exc:
        return _job_page(page, job.id, _said(page, exc), code=400)
    message = f"{action}d job {changed.id} ({changed.name})"
    return _back(page, message, None if action == "remove" else changed.id)


def _run(page: Page, jobs: Jobs, job: Job) -> Response:
    if job.running_pid is not None or runner(page.request).state(page.profile, job.id)[0]:
        raise UserError(f"job {job.id} is running already (pid {job.running_pid})")
    runner(page.request).start(page, job)
    return _back(page, f"started a run of job {job.id} ({job.name})", job.id)


@router.get("/p/{profile}/cron/{ref}/status", response_class=HTMLResponse)
def run_status(page: PageOf, ref: str) -> HTMLResponse:
    """The job's latest run and its runs (an htmx fragment that polls itself while a run
    goes on)."""
    jobs, job = _found(page, ref)
    status = _status(page, jobs, job)
    return page.views.render("cron/status.html", status=status, row=_row(jobs, job),
                             runs=_runs(page, job), base=_base(page))


@router.get("/p/{profile}/cron/{ref}/runs/{name}", response_class=HTMLResponse)
def run_output(page: PageOf, ref: str, name: str) -> HTMLResponse:
    """One run's output file (only a file of the job's listing is read)."""
    jobs, job = _found(page, ref)
    runs = {path.name: path for path in _runs(page, job)}
    if name not in runs:
        raise HTTPException(404, f"Job {job.id} has no run {name!r}.")
    text = runs[name].read_text(encoding="utf-8", errors="replace")
    return page.render("cron/run.html", "cron", row=_row(jobs, job), run_name=name, text=text,
                       base=_base(page))


@dataclass(frozen=True)
class RunStatus:
    """How the job's latest run stands."""

    running: bool
    refused: str | None
    output: str | None
    """The last run's output (once it has ended)."""


def _status(page: Page, jobs: Jobs, job: Job) -> RunStatus:
    started, refused = runner(page.request).state(page.profile, job.id)
    running = started or jobs.store.running(job)
    output = None
    if not running and job.last_output:
        path = page.home.path / job.last_output
        if path.parent == jobs.store.output_dir / job.id and path.is_file():
            output = path.read_text(encoding="utf-8", errors="replace")
    return RunStatus(running, refused, output)


def _found(page: Page, ref: str) -> tuple[Jobs, Job]:
    try:
        jobs = _jobs(page)
        return jobs, jobs.get(ref)
    except UserError as exc:
        raise HTTPException(404, _said(page, exc)) from None


def _runs(page: Page, job: Job) -> list[Path]:
    """The job's output files, newest first."""
    folder = page.home.cron_dir / "output" / job.id
    return sorted(folder.glob("*.md"), reverse=True)[:RUNS_SHOWN] if folder.is_dir() else []


def _changes(job: Job, form: dict[str, str]) -> dict[str, Any]:
    """The form's fields that differ from the job (as ``hermes cron edit`` options)."""
    current = {"prompt": job.prompt, "name": job.name, "schedule": job.schedule,
               "deliver": job.deliver, "skills": job.skills, "repeat": job.repeat}
    asked: dict[str, Any] = {key: form[key].strip() for key in EDITABLE if key in form}
    if "skills" in asked:
        asked["skills"] = _skills(asked["skills"])
    if "repeat" in asked:
        asked["repeat"] = _count(asked["repeat"])
        if asked["repeat"] is None:
            del asked["repeat"]
    changes = {key: value for key, value in asked.items() if value != current[key]}
    if not changes:
        raise UserError("nothing to change: change the schedule, prompt, name, deliver, "
                        "skills or repeat")
    return changes


def _skills(text: str) -> list[str]:
    return [name for name in text.replace(",", " ").split() if name]


def _count(text: str) -> Any:
    """A repeat count as typed: None (empty), a number, else the text (the service refuses
    anything but a count, in its own words)."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return text


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)
            and key != "csrf_token"}


def _back(page: Page, said: str, job_id: str | None = None) -> RedirectResponse:
    where = _base(page) + (f"/{quote(job_id)}" if job_id else "")
    return RedirectResponse(f"{where}?done={leave(page.request, said)}", status_code=303)


def _said(page: Page, exc: UserError) -> str:
    """A refusal as the CLI prints it for this profile (its hints carry ``-p NAME``)."""
    return for_profile(str(exc), page.profile)
