"""The dashboard's Sessions page over HTTP and in the real Chromium: the list (filters,
cursor paging), search with highlighted snippets, a transcript with folded tool calls and
its lineage, export as ``hermes sessions export`` writes it, rename and delete (POSTs with
the anti-CSRF token), and a profile token that sees its own profile's sessions only.

The sessions are written through the real session store before the dashboard starts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from dashboard_support import Dashboard, browser_page, csrf_of, dashboard_for, screenshot
from hermes.agent.compress import Compressed, continue_in_child
from hermes.dashboard.pages.sessions import PAGE_SIZE, TRANSCRIPT_PART
from hermes.dashboard.tokens import Tokens
from hermes.sessions import SessionStore, Usage

SCRIPT = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'
FILLERS = PAGE_SIZE + 5


def db_of(environ: dict[str, str], profile: str = "default") -> Path:
    root = Path(environ["HOME"]) / ".hermes"
    return (root if profile == "default" else root / "profiles" / profile) / "state.db"


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def write_sessions(environ: dict[str, str]) -> None:
    """default: fillers (two pages), a deployment chat with a tool call, compressed and
    with a sub-agent, and a session quoting markup; work: one session of its own."""
    with SessionStore(db_of(environ)) as store:
        for i in range(FILLERS):
            store.add_message(store.create_session("telegram", "m", title=f"filler {i}"),
                              "user", f"small talk {i}")
        root = store.create_session("cli", "gpt-4o", title="Release planning")
        store.add_messages(root, [
            {"role": "user", "content": "check the zebrafish canary before we ship"},
            {"role": "assistant", "content": "Reading the rollout notes.",
             "tool_calls": [call("c1", "read_file", {"path": "ROLLOUT.md"})]},
            {"role": "tool", "content": "canary: 5% for an hour", "tool_call_id": "c1",
             "name": "read_file"},
        ])
        store.add_message(root, "assistant", "The canary runs at 5%.",
                          usage=Usage(1200, 300, cost_usd=0.0123))
        helper = store.create_session("cli", "gpt-4o", root, title="sub-agent: logs")
        store.add_message(helper, "assistant", "logs are clean")
        child = continue_in_child(store, root, Compressed(
            [{"role": "user", "content": "summary: canary checked"}], "summarised", 3))
        store.add_message(child, "assistant", "continuing after the summary")
        long = store.create_session("cli", "m", title="A long one")
        store.add_messages(long, [{"role": "user", "content": f"line {i}"}
                                  for i in range(TRANSCRIPT_PART + 9)])
        store.add_message(long, "user", f"line {TRANSCRIPT_PART + 9}: a narwhal at last")
        markup = store.create_session("cli", "m", title="<b>bold</b> title")
        store.add_message(markup, "user", f"what does {SCRIPT} do")
    with SessionStore(db_of(environ, "work")) as store:
        store.add_message(store.create_session("cli", "m", title="Quokka budget"), "user",
                          "the quokka budget is private to work")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    with dashboard_for(tmp_path_factory.mktemp("sessions"), profiles=("work", "empty"),
                       prepare=write_sessions) as running:
        yield running


@pytest.fixture(scope="module")
def page(board: Dashboard, chromium: str) -> Iterator[Any]:
    with browser_page(chromium, board) as opened:
        opened.set_default_timeout(10_000)
        yield opened


def session_id(board: Dashboard, title: str, profile: str = "default") -> str:
    with SessionStore(db_of(board.environ, profile)) as store:
        return next(s.id for s in store.list_sessions(limit=None) if s.title == title)


def listed(html: str) -> list[str]:
    """The ids of the sessions a list page shows."""
    return re.findall(r'<td class="title"><a href="/p/\w+/sessions/(\w+)">', html)


def titles(html: str) -> list[str]:
    return re.findall(r'<td class="title"><a href="[^"]+">([^<]*)</a>', html)


def test_the_list_pages_with_the_cursor_and_filters_by_source(board: Dashboard) -> None:
    with board.client() as client:
        first = client.get("/p/default/sessions")
        assert first.status_code == 200 and "<h1>Sessions</h1>" in first.text
        shown = titles(first.text)
        assert len(shown) == PAGE_SIZE and shown[0] == "&lt;b&gt;bold&lt;/b&gt; title"
        more = re.search(r'hx-get="(/p/default/sessions-more\?[^"]+)"', first.text)
        assert more, first.text[-2000:]
        rest = client.get(more[1].replace("&amp;", "&"))
        assert rest.status_code == 200 and "<html" not in rest.text  # a fragment
        everything = listed(first.text) + listed(rest.text)
        assert len(everything) == FILLERS + 5 == len(set(everything))
        assert "sessions-more" not in rest.text  # the last page
        telegram = titles(client.get("/p/default/sessions?source=telegram").text)
        assert len(telegram) == PAGE_SIZE and all(t.startswith("filler") for t in telegram)
        bad = client.get("/p/default/sessions?cursor=nonsense")
        assert bad.status_code == 400 and "invalid page cursor" in bad.text
        assert client.get("/p/default/sessions?since=2001-02-30").status_code == 400


def test_a_hit_past_the_first_part_opens_the_part_holding_it(board: Dashboard) -> None:
    with board.client() as client:
        found = client.get("/p/default/sessions?q=narwhal").text
        link = re.search(r'href="(/p/default/sessions/\w+\?at=(\d+))#m\d+">A long one<', found)
        assert link, found
        opened = client.get(link[1]).text
        assert f'id="m{link[2]}"' in opened and "from the first one" in opened
        assert len(re.findall(r'<article class="msg', opened)) == 1
        start = client.get(link[1].split("?")[0]).text
        assert f'id="m{link[2]}"' not in start and "from the first one" not in start


def test_a_profile_without_a_database_has_no_sessions_and_gets_none_made(board: Dashboard
                                                                          ) -> None:
    with board.client() as client:
        listing = client.get("/p/empty/sessions")
        assert listing.status_code == 200 and "No sessions yet." in listing.text
        assert "0 conversations" in client.get("/p/empty/sessions?q=canary").text
        assert client.get("/p/empty/sessions/abc").status_code == 404
        csrf = csrf_of(listing.text)
        assert client.post("/p/empty/sessions/abc/delete",
                           data={"csrf_token": csrf}).status_code == 404
    assert not db_of(board.environ, "empty").exists()


def test_export_is_what_hermes_sessions_export_writes(board: Dashboard) -> None:
    sid = session_id(board, "Release planning")
    with board.client() as client:
        for fmt in ("jsonl", "md"):
            answer = client.get(f"/p/default/sessions/{sid[:10]}/export?format={fmt}")
            assert answer.status_code == 200
            assert answer.headers["content-disposition"] == \
                f'attachment; filename="session-{sid}.{fmt}"'
            cli = subprocess.run([sys.executable, "-m", "hermes", "sessions", "export", sid,
                                  "--format", fmt], env=board.environ, capture_output=True,
                                 text=True, timeout=60)
            assert cli.returncode == 0 and answer.text == cli.stdout
        assert client.get(f"/p/default/sessions/{sid}/export?format=pdf").status_code == 400
        assert client.get("/p/default/sessions/nosuch/export").status_code == 404


def test_rename_and_delete_are_refused_without_the_anti_csrf_token(board: Dashboard) -> None:
    sid = session_id(board, "filler 0")
    with board.client() as client:
        for path, data in ((f"/p/default/sessions/{sid}/rename", {"title": "hijacked"}),
                           (f"/p/default/sessions/{sid}/delete", {})):
            assert client.post(path, data=data).status_code == 403
            assert client.post(path, data=data | {"csrf_token": "wrong"}).status_code == 403
        csrf = csrf_of(client.get(f"/p/default/sessions/{sid}").text)
        empty = client.post(f"/p/default/sessions/{sid}/rename",
                            data={"title": " ", "csrf_token": csrf})
        assert empty.status_code == 400 and 'class="problem"' in empty.text
    with SessionStore(db_of(board.environ)) as store:
        assert store.get_session(sid).title == "filler 0"  # nothing changed


def test_a_profile_token_sees_its_own_profiles_sessions_only(board: Dashboard) -> None:
    token = Tokens(board.root).profile_token("work")
    ours, theirs = session_id(board, "Quokka budget", "work"), session_id(board, "filler 1")
    with board.client(logged_in=False,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        own = client.get("/p/work/sessions")
        assert own.status_code == 200 and titles(own.text) == ["Quokka budget"]
        assert 'name="of"' not in own.text  # no profile filter: one profile to see
        for path in ("/p/default/sessions", f"/p/default/sessions/{theirs}",
                     f"/p/default/sessions/{theirs}/export", "/p/default/sessions?q=zebrafish"):
            assert client.get(path).status_code == 403, path
        refused = client.get("/p/work/sessions?of=default&q=zebrafish")
        assert refused.status_code == 400 and "Release planning" not in refused.text
        assert 'no profile "default" on this page; profiles: work' in unescape(refused.text)
        assert titles(client.get("/p/work/sessions?of=all").text) == ["Quokka budget"]
        assert client.get(f"/p/work/sessions/{theirs}").status_code == 404
        assert "Quokka" in client.get(f"/p/work/sessions/{ours}").text
    with board.client() as client:  # the root token: both profiles at once
        both = client.get("/p/default/sessions?of=all&q=quokka")
        assert re.findall(r'#m\d+">([^<]+)</a>', both.text) == ["Quokka budget"]
        assert len(titles(client.get("/p/default/sessions?of=all").text)) == PAGE_SIZE


@pytest.mark.chromium
def test_a_session_found_by_search_and_opened(board: Dashboard, page: Any) -> None:
    page.goto(board.url("/p/default/sessions"))
    screenshot(page, "sessions-list")
    page.fill("#q", "zebrafish")
    with page.expect_navigation():
        page.press("#q", "Enter")
    hits = page.locator("ol.hits li")
    assert hits.count() == 1
    assert hits.locator("mark").all_inner_texts() == ["zebrafish"]
    screenshot(page, "sessions-search")
    with page.expect_navigation():
        hits.locator("a").click()
    assert page.locator("h1").inner_text() == "Release planning"
    call_fold = page.locator("details.call")
    assert call_fold.count() == 1 and not call_fold.evaluate("d => d.open")
    assert not page.get_by_text("canary: 5% for an hour").is_visible()
    call_fold.locator("summary").click()
    assert page.get_by_text("canary: 5% for an hour").is_visible()  # the result, folded in
    tree = page.locator("ul.tree")
    assert tree.locator("a").all_inner_texts() == ["sub-agent: logs", "Release planning"]
    assert "continued after compression" in tree.inner_text()
    assert "1,200 in / 300 out" in page.locator("dl.facts").inner_text()
    assert "$0.0123" in page.locator("dl.facts").inner_text()
    screenshot(page, "sessions-transcript")


@pytest.mark.chromium
def test_markup_in_a_message_is_shown_as_text(board: Dashboard, page: Any) -> None:
    sid = session_id(board, "<b>bold</b> title")
    page.goto(board.url(f"/p/default/sessions/{sid}"))
    assert page.locator("h1").inner_text() == "<b>bold</b> title"
    assert SCRIPT in page.locator("article.msg.user .text").inner_text()
    assert page.locator("main script, main img").count() == 0
    page.goto(board.url("/p/default/sessions?q=pwned"))
    snippet = page.locator(".snippet")
    assert "<script>" in snippet.inner_text() and snippet.locator("script").count() == 0
    assert page.title() != "pwned"


@pytest.mark.chromium
def test_a_long_transcript_comes_in_parts(board: Dashboard, page: Any) -> None:
    page.goto(board.url(f"/p/default/sessions/{session_id(board, 'A long one')}"))
    messages = page.locator("article.msg")
    assert messages.count() == TRANSCRIPT_PART
    page.get_by_role("link", name="Later messages").click()
    page.wait_for_function(f"document.querySelectorAll('article.msg').length == "
                           f"{TRANSCRIPT_PART + 10}")
    assert messages.last.inner_text().endswith("a narwhal at last")
    assert page.get_by_role("link", name="Later messages").count() == 0


@pytest.mark.chromium
def test_next_page_appends_rows_in_place(board: Dashboard, page: Any) -> None:
    page.goto(board.url("/p/default/sessions"))
    rows = page.locator("#session-rows td.title")
    assert rows.count() == PAGE_SIZE
    page.get_by_role("link", name="Next page").click()
    page.wait_for_function(f"document.querySelectorAll('#session-rows td.title').length > "
                           f"{PAGE_SIZE}", timeout=10_000)
    assert page.url == board.url("/p/default/sessions")  # htmx, no navigation
    assert page.get_by_role("link", name="Next page").count() == 0


@pytest.mark.chromium
def test_rename_and_delete_through_the_page(board: Dashboard, page: Any) -> None:
    sid = session_id(board, "filler 2")
    page.goto(board.url(f"/p/default/sessions/{sid}"))
    page.fill("#title", "Renamed in the browser")
    with page.expect_navigation():
        page.get_by_role("button", name="Rename").click()
    page.wait_for_url(board.url(f"/p/default/sessions/{sid}"))
    assert page.locator("h1").inner_text() == "Renamed in the browser"
    confirm = page.get_by_role("button", name="Yes, delete it")
    assert not confirm.is_visible()  # asked first
    page.locator("details.delete summary").click()
    with page.expect_navigation():
        confirm.click()
    assert page.url.startswith(board.url("/p/default/sessions?"))
    assert f"deleted session {sid} (1 messages)" in page.locator(".notice").inner_text()
    with SessionStore(db_of(board.environ)) as store:
        assert all(s.id != sid for s in store.list_sessions(limit=None))


@pytest.mark.chromium
def test_phone_width_reads_without_sideways_scrolling(board: Dashboard, page: Any) -> None:
    page.set_viewport_size({"width": 375, "height": 740})
    try:
        for path in ("/p/default/sessions", "/p/default/sessions?q=canary",
                     f"/p/default/sessions/{session_id(board, 'Release planning')}"):
            page.goto(board.url(path))
            overflow = page.evaluate("document.documentElement.scrollWidth - innerWidth")
            assert overflow <= 0, path
        screenshot(page, "sessions-transcript-phone")
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
