"""The dashboard's Cron page in the real Chromium and over real HTTP: a job added and run
in the page (against the fake LLM, through ``hermes cron run``) with its output shown, a
bad schedule refused with the CLI's own line, pause/resume/remove, a POST without the
anti-CSRF token refused, a profile's token kept off another profile's jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until, write_fake_provider
from dashboard_support import Dashboard, csrf_of, dashboard_for, screenshot
from fakellm import FakeLLM, Fault, Reply
from hermes.dashboard.tokens import Tokens

RUN_TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[Dashboard]:
    """default on the fake LLM, no jobs; work with one job of its own."""
    def prepare(environ: dict[str, str]) -> None:
        write_fake_provider(Path(environ["HOME"]) / ".hermes", llm.openai_base_url)
        hermes(environ, "-p", "work", "cron", "add", "every 1d", "Work's own report",
               "-n", "work-report")

    with dashboard_for(tmp_path_factory.mktemp("board"), profiles=("work",),
                       prepare=prepare) as running:
        yield running


def hermes(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=environ,
                          capture_output=True, text=True, timeout=120)


def stored(board: Dashboard, profile: str = "default") -> list[dict[str, Any]]:
    home = board.root if profile == "default" else board.root / "profiles" / profile
    path = home / "cron" / "jobs.json"
    jobs: list[dict[str, Any]] = json.loads(path.read_text())["jobs"] if path.exists() else []
    return jobs


def add_in_page(page: Any, board: Dashboard, schedule: str, prompt: str, name: str) -> None:
    page.goto(board.url("/p/default/cron"))
    page.fill("#add-schedule", schedule)
    page.fill("#add-prompt", prompt)
    page.fill("#add-name", name)
    page.click("text=Add job")


def job_named(board: Dashboard, name: str) -> dict[str, Any]:
    return next(job for job in stored(board) if job["name"] == name)


@pytest.mark.chromium
def test_a_job_added_and_run_in_the_page_shows_its_output(board: Dashboard, page: Any,
                                                         llm: FakeLLM) -> None:
    add_in_page(page, board, "every 1d", "Say hello to the dashboard", "hello")
    assert "added job" in page.inner_text(".cron-done")
    job = job_named(board, "hello")
    assert (job["schedule"], job["state"], job["deliver"]) == ("every 1d", "scheduled", "local")
    row = page.locator(f"#job-{job['id']}")
    assert "every 1d" in row.inner_text()
    screenshot(page, "cron")

    llm.script.push(Reply(text="Hello from a cron run in the page."))
    row.get_by_role("button", name="Run now hello").click()
    assert page.url.startswith(board.url(f"/p/default/cron/{job['id']}?done="))
    page.locator(".cron-output").wait_for(timeout=RUN_TIMEOUT_MS)  # polled in by htmx
    assert "Hello from a cron run in the page." in page.inner_text(".cron-output")
    assert "ok" in page.inner_text("#run-status")
    assert "Say hello to the dashboard" in (llm.requests[-1].last_user_text or "")
    ran = job_named(board, "hello")
    assert (ran["last_status"], ran["next_run"], ran["runs"]) == ("ok", job["next_run"], 0)
    screenshot(page, "cron-job")

    page.locator(".cron-runs a").first.click()  # the runs' list came with the status
    assert "Hello from a cron run in the page." in page.inner_text("pre.cron-output")
    assert (board.root / ran["last_output"]).name in page.url


@pytest.mark.chromium
def test_a_bad_schedule_is_refused_with_the_clis_line(board: Dashboard, page: Any) -> None:
    before = stored(board)
    cli = hermes(board.environ, "cron", "add", "every fortnight", "Never stored")
    assert cli.returncode == 2
    line = cli.stderr.strip().removeprefix("error: ")
    add_in_page(page, board, "every fortnight", "Never stored", "bad")
    assert page.inner_text(".cron-error") == line
    assert page.input_value("#add-prompt") == "Never stored"  # the form is kept
    assert stored(board) == before


@pytest.mark.chromium
def test_pause_resume_edit_and_remove_in_the_page(board: Dashboard, page: Any) -> None:
    add_in_page(page, board, "every 2h", "Check the build", "build")
    job = job_named(board, "build")
    row = page.locator(f"#job-{job['id']}")
    row.get_by_role("button", name="Pause build").click()
    assert job_named(board, "build")["state"] == "paused"
    assert "paused job" in page.inner_text(".cron-done")
    page.get_by_role("button", name="Resume build").click()
    assert job_named(board, "build")["state"] == "scheduled"

    page.fill("#edit-repeat", "0")  # refused as the service refuses it, nothing written
    page.click("text=Save changes")
    assert page.inner_text(".cron-error").startswith("repeat: 0 is not a count of runs")
    page.fill("#edit-repeat", "")
    page.fill("#edit-schedule", "every 30m")
    page.click("text=Save changes")
    assert job_named(board, "build")["schedule"] == "every 30m"

    page.get_by_role("button", name="Remove build").click()
    assert page.url.startswith(board.url("/p/default/cron?done="))
    assert "build" not in [j["name"] for j in stored(board)]
    assert page.locator(f"#job-{job['id']}").count() == 0


@pytest.mark.chromium
def test_the_cron_pages_read_at_phone_width(board: Dashboard, page: Any) -> None:
    page.set_viewport_size({"width": 375, "height": 740})
    try:
        add_in_page(page, board, "every 4h", "A prompt long enough to wrap on a phone, " * 3,
                    "phone")
        job = job_named(board, "phone")
        for path, name in (("/p/default/cron", "cron-phone"),
                           (f"/p/default/cron/{job['id']}", "cron-job-phone")):
            page.goto(board.url(path))
            assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0
            screenshot(page, name)
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})


def test_a_post_without_the_anti_csrf_token_is_refused(board: Dashboard) -> None:
    with board.client() as client:
        html = client.get("/p/default/cron").text
        client.post("/p/default/cron", data={"csrf_token": csrf_of(html),
                                             "schedule": "every 3h", "prompt": "Target"})
        job = job_named(board, "Target")
        for data in ({}, {"csrf_token": "wrong"}):
            refused = client.post(f"/p/default/cron/{job['id']}/pause", data=data)
            assert refused.status_code == 403, refused.text
        assert job_named(board, "Target")["state"] == "scheduled"
        paused = client.post(f"/p/default/cron/{job['id']}/pause",
                             data={"csrf_token": csrf_of(html)})
        assert paused.status_code == 303
        assert job_named(board, "Target")["state"] == "paused"


def test_a_profiles_token_cannot_touch_another_profiles_jobs(board: Dashboard) -> None:
    work_job = stored(board, "work")[0]
    default_job = stored(board)[0]
    work_token = Tokens(board.root).profile_token("work")
    with board.client(logged_in=False) as client:
        as_work = {"Authorization": f"Bearer {work_token}"}
        own = client.get("/p/work/cron", headers=as_work)
        assert own.status_code == 200 and "work-report" in own.text
        for path in ("/p/default/cron", f"/p/default/cron/{default_job['id']}"):
            assert client.get(path, headers=as_work).status_code == 403
        for action in ("remove", "pause", "run"):
            answer = client.post(f"/p/default/cron/{default_job['id']}/{action}",
                                 headers=as_work)
            assert answer.status_code == 403, answer.text
        answer = client.post(f"/p/work/cron/{default_job['id']}/remove", headers=as_work)
        assert answer.status_code == 404  # default's job is no job of work's
    assert stored(board)[0] == default_job and stored(board, "work") == [work_job]
    with board.client() as client:  # the root token: each profile's own jobs only
        assert "work-report" not in client.get("/p/default/cron").text
        assert default_job["name"] not in client.get("/p/work/cron").text


def test_a_failed_run_shows_its_error(board: Dashboard, llm: FakeLLM) -> None:
    with board.client() as client:
        csrf = csrf_of(client.get("/p/default/cron").text)
        client.post("/p/default/cron", data={"csrf_token": csrf, "schedule": "every 6h",
                                             "prompt": "Fail, please", "name": "failing"})
        job = job_named(board, "failing")
        llm.script.push(Fault.server_error())
        started = client.post(f"/p/default/cron/{job['id']}/run", data={"csrf_token": csrf})
        assert started.status_code == 303
        status = f"/p/default/cron/{job['id']}/status"
        assert "hx-trigger" in client.get(status).text  # polled while it runs
        wait_until(lambda: "hx-trigger" not in client.get(status).text, timeout=30,
                   what="the run to end", interval=0.2)
        ended = client.get(status).text
    failed = job_named(board, "failing")
    assert failed["last_status"] == "error" and failed["last_error"]
    assert 'class="status-error">error<' in ended
    assert escape(failed["last_error"], quote=False) in ended


def test_a_run_whose_process_died_is_not_shown_running(board: Dashboard) -> None:
    """A run left ``running`` by a process that died: the page does not poll for ever."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    with board.client() as client:
        html = client.get("/p/default/cron").text
        client.post("/p/default/cron", data={"csrf_token": csrf_of(html),
                                             "schedule": "every 5h", "prompt": "Abandoned"})
        path = board.root / "cron" / "jobs.json"
        data = json.loads(path.read_text())
        for job in data["jobs"]:
            if job["name"] == "Abandoned":
                job |= {"running_pid": dead.pid, "last_status": "running"}
        path.write_text(json.dumps(data))
        job = job_named(board, "Abandoned")
        status = client.get(f"/p/default/cron/{job['id']}/status").text
        assert "hx-trigger" not in status and "Running" not in status, status
        live = dict(job, running_pid=board.process.pid)  # a live process's run polls
        path.write_text(json.dumps({"jobs": [live]}))
        assert "hx-trigger" in client.get(f"/p/default/cron/{job['id']}/status").text
        path.write_text(json.dumps(data))
