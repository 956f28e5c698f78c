"""Review fixes of the dashboard, over real HTTP: a page's confirmation travels as a key
the dashboard issued (a link cannot make a page say its own words), a cron run started
from the page is reaped when it ends, a long session resumes at its latest part, a
search keeps to the Sessions page's dates."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until, write_fake_provider
from dashboard_support import Dashboard, browser_page, csrf_of, dashboard_for
from fakellm import FakeLLM, Reply
from hermes.sessions import SessionStore

LONG = 450
FORGED = "Your session expired: log in again at evil.example"


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[Dashboard]:
    """default on the fake LLM with one daily job."""
    def prepare(environ: dict[str, str]) -> None:
        write_fake_provider(Path(environ["HOME"]) / ".hermes", llm.openai_base_url)
        added = subprocess.run([sys.executable, "-m", "hermes", "cron", "add", "every 1d",
                                "Daily report", "-n", "daily"], env=environ,
                               capture_output=True, text=True, timeout=120)
        assert added.returncode == 0, added.stderr
        with SessionStore(Path(environ["HOME"]) / ".hermes" / "state.db") as store:
            long = store.create_session("cli", "m", title="long")
            store.add_messages(long, [{"role": "user" if i % 2 == 0 else "assistant",
                                       "content": f"message number {i}."}
                                      for i in range(LONG)])

    with dashboard_for(tmp_path_factory.mktemp("board"), prepare=prepare) as running:
        yield running


def jobs(board: Dashboard) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(
        (board.root / "cron" / "jobs.json").read_text())["jobs"]
    return found


@pytest.mark.parametrize("path", ["/p/default/cron", "/p/default/config",
                                  "/p/default/gateway", "/p/default/sessions"])
def test_a_link_cannot_make_a_page_say_its_own_words(board: Dashboard, path: str) -> None:
    with board.client() as client:
        for name in ("done", "notice"):
            answer = client.get(path, params={name: FORGED})
            assert answer.status_code == 200, answer.text
            assert "evil.example" not in answer.text


def test_an_action_s_confirmation_is_shown_through_its_key(board: Dashboard) -> None:
    job = jobs(board)[0]
    with board.client() as client:
        csrf = csrf_of(client.get(f"/p/default/cron/{job['id']}").text)
        answer = client.post(f"/p/default/cron/{job['id']}/pause",
                             data={"csrf_token": csrf})
        assert answer.status_code == 303
        where = answer.headers["location"]
        assert "paused" not in where
        shown = client.get(where).text
        assert f"paused job {job['id']} (daily)" in shown
        with board.client() as another:  # another browser's session: the key says nothing
            assert "paused job" not in another.get(where).text
        client.post(f"/p/default/cron/{job['id']}/resume", data={"csrf_token": csrf})


def children(pid: int) -> list[int]:
    """The processes ``pid`` started and has not reaped (running, or ended: zombies)."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def test_a_run_started_in_the_page_is_reaped_when_it_ends(board: Dashboard,
                                                          llm: FakeLLM) -> None:
    """No page polls the job's status: the ended run is reaped all the same."""
    job = jobs(board)[0]
    llm.script.push(Reply(text="The daily report."))
    with board.client() as client:
        csrf = csrf_of(client.get(f"/p/default/cron/{job['id']}").text)
        answer = client.post(f"/p/default/cron/{job['id']}/run", data={"csrf_token": csrf})
        assert answer.status_code == 303, answer.text
    wait_until(lambda: jobs(board)[0]["last_status"] == "ok", 30, "the run to end")
    wait_until(lambda: not children(board.process.pid), 15, "the ended run to be reaped")


def test_a_long_session_resumes_at_its_latest_part_and_loads_the_earlier_parts(
        board: Dashboard) -> None:
    with SessionStore(board.root / "state.db") as store:
        long = next(s.id for s in store.list_sessions() if s.title == "long")
    seen: list[int] = []
    with board.client() as client:
        answer = client.get(f"/p/default/chat/{long}")
        while True:
            assert answer.status_code == 200, answer.text
            part = [int(n) for n in re.findall(r"message number (\d+)\.", answer.text)]
            assert len(part) <= 200
            seen = part + seen
            earlier = re.search(r'hx-get="([^"]+/earlier\?before=\d+)"', answer.text)
            if earlier is None:
                break
            answer = client.get(earlier[1].replace("&amp;", "&"))
    assert seen == list(range(LONG))


def test_a_search_keeps_to_the_page_s_dates(board: Dashboard) -> None:
    today = date.today()
    with board.client() as client:
        def hits(**dates: str) -> int:
            answer = client.get("/p/default/sessions", params={"q": "number", **dates})
            assert answer.status_code == 200, answer.text
            found = re.search(r"(\d+) conversations? matching", answer.text)
            assert found, answer.text[-2000:]
            return int(found[1])
        assert hits() == 1 and hits(since=str(today), until=str(today)) == 1
        assert hits(since=str(today + timedelta(days=1))) == 0
        assert hits(until=str(today - timedelta(days=1))) == 0


@pytest.mark.chromium
def test_earlier_messages_loads_the_part_before_in_the_page(board: Dashboard,
                                                            chromium: str) -> None:
    with SessionStore(board.root / "state.db") as store:
        long = next(s.id for s in store.list_sessions() if s.title == "long")
    from playwright.sync_api import expect

    with browser_page(chromium, board) as page:
        page.goto(board.url(f"/p/default/chat/{long}"))
        texts = page.locator("#transcript .msg .text")
        assert texts.count() == 200
        for shown in (400, LONG):
            page.click("#transcript .earlier button")
            expect(page.locator("#transcript .msg")).to_have_count(shown, timeout=10_000)
        assert page.locator("#transcript .earlier").count() == 0
        assert texts.first.inner_text() == "message number 0."
        assert texts.last.inner_text() == f"message number {LONG - 1}."
