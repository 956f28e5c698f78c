"""The dashboard attacked over real HTTP, route by route: every route of the app (read
from ``app.routes``, so a page added later is covered without touching this file) refuses
another profile's token, a foreign ``Host``/``Origin`` and, when it changes state, a
request without the anti-CSRF token; every answer carries the security headers. And the
agent, attacking from its own terminal and file tools, reads no token."""

# Fixtures imported from sandbox_support are these tests' parameters:
# ruff: noqa: F811

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dashboard_support import Dashboard, csrf_of, dashboard_for
from fakellm import FakeLLM, Reply, ToolCall
from hermes.dashboard.pages import built
from sandbox_support import (  # noqa: F401 (demo, llm, workspace: fixtures)
    backends,
    demo,
    llm,
    workspace,
)
from test_sandbox_cli import agent

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    with dashboard_for(tmp_path_factory.mktemp("attacks"), profiles=("work",)) as running:
        yield running


@pytest.fixture(scope="module")
def routes(board: Dashboard) -> list[tuple[str, str]]:
    """``(method, path template)`` of every route the dashboard's app serves."""
    from fastapi.routing import APIRoute

    from hermes.config.dashboard_schema import DashboardConfig
    from hermes.dashboard.app import create_app

    def walk(found: list[Any]) -> Iterator[APIRoute]:
        for route in found:
            if hasattr(route, "original_router"):  # fastapi's included router
                yield from walk(route.original_router.routes)
            elif hasattr(route, "routes") and not isinstance(route, APIRoute):
                yield from walk(route.routes)
            elif isinstance(route, APIRoute):
                yield route

    app = create_app(board.root, DashboardConfig(), environ=board.environ)
    listed = sorted({(method, route.path) for route in walk(app.routes)
                     for method in route.methods or ()})
    for section in built():  # the enumeration reaches every page's router
        assert any(path.startswith(f"/p/{{profile}}/{section.name}") for _, path in listed)
    return listed


def filled(template: str, profile: str = "default") -> str:
    return re.sub(r"\{(\w+)(:\w+)?\}",
                  lambda m: profile if m[1] == "profile" else "x", template)


def _token_files_unreadable_to_the_agent(hermes_subprocess: Any, llm: FakeLLM,
                                          backend: str, workspace: Path, files: list[Path],
                                          env: dict[str, str]) -> None:
    secrets = [path.read_text().strip() for path in files]
    assert all(secrets)
    calls: list[str | ToolCall] = [f"cat {path}" for path in files]
    calls += [f"grep -r . {path.parent}" for path in files]
    calls += [ToolCall("read_file", {"path": str(path)}) for path in files]
    calls += [ToolCall("search_files", {"pattern": secrets[0][:8], "path": str(path.parent)})
              for path in files]
    text = json.dumps(agent(hermes_subprocess, llm, backend, workspace, *calls,
                            overrides=tuple(f"{k}={v}" for k, v in env.items())))
    for secret in secrets:
        assert secret not in text and secret[:12] not in text


@pytest.mark.parametrize("backend", backends())
def test_the_agent_cannot_read_the_dashboard_tokens(
        hermes_subprocess: Any, llm: FakeLLM, backend: str, root: Path, demo: Path,
        workspace: Path) -> None:
    """A prompt-injected agent's terminal and file tools reach neither the root token nor
    its own profile's token (either would let it approve its own commands in a page)."""
    from hermes.dashboard.tokens import Tokens

    tokens = Tokens(root)
    for make in (tokens.root_token, lambda: tokens.profile_token("demo")):
        make()
    files = [root / "dashboard" / "token", demo / "dashboard" / "profile-token"]
    _token_files_unreadable_to_the_agent(hermes_subprocess, llm, backend, workspace, files,
                                         {})


@pytest.mark.parametrize("backend", backends())
def test_with_hermes_home_elsewhere_the_agent_cannot_read_its_tokens(
        hermes_subprocess: Any, llm: FakeLLM, backend: str, workspace: Path,
        tmp_path: Path) -> None:
    """``HERMES_HOME`` outside ``~/.hermes`` (the root is then that home): the same."""
    from conftest import write_fake_provider
    from hermes.dashboard.tokens import Tokens

    home = Path(tempfile.mkdtemp(prefix="hermes-elsewhere-", dir="/var/tmp"))
    try:
        write_fake_provider(home, llm.openai_base_url)
        Tokens(home).root_token()
        Tokens(home).profile_token("default")
        files = [home / "dashboard" / "token", home / "dashboard" / "profile-token"]
        secrets = [path.read_text().strip() for path in files]
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"cat {files[0]}"}),
                                   ToolCall("terminal", {"command": f"cat {files[1]}"}),
                                   ToolCall("read_file", {"path": str(files[1])})]),
                 Reply(text="done"))
        proc = hermes_subprocess("-z", "go", f"environment.cwd={workspace}",
                                 f"environment.local.sandbox.backend={backend}",
                                 "approvals.mode=off", env={"HERMES_HOME": str(home)})
        assert proc.returncode == 0, proc.stderr
        text = json.dumps([r.content for r in llm.requests[-1].tool_results])
        assert len(llm.requests[-1].tool_results) == 3
        for secret in secrets:
            assert secret[:12] not in text
    finally:
        shutil.rmtree(home, ignore_errors=True)


def work_token(board: Dashboard) -> str:
    from hermes.dashboard.tokens import Tokens

    return Tokens(board.root).profile_token("work")


def test_every_route_of_a_profile_refuses_another_profile_s_token(
        board: Dashboard, routes: list[tuple[str, str]]) -> None:
    bearer = {"Authorization": f"Bearer {work_token(board)}"}
    checked = 0
    with board.client(logged_in=False) as client:
        for method, template in routes:
            if "{profile}" not in template:
                continue
            answer = client.request(method, filled(template), headers=bearer)
            assert answer.status_code == 403, (method, template, answer.status_code)
            checked += 1
    assert checked > 20


def test_every_state_changing_route_needs_the_anti_csrf_token_and_its_own_origin(
        board: Dashboard, routes: list[tuple[str, str]]) -> None:
    unsafe = [(m, t) for m, t in routes if m not in SAFE]
    assert unsafe
    with board.client() as client:
        csrf = csrf_of(client.get(board.start_path).text)
        for method, template in unsafe:
            path = filled(template)
            for headers, form in (({}, None), ({"X-CSRF-Token": "wrong"}, None),
                                  ({}, {"csrf_token": "wrong"}),
                                  ({"X-CSRF-Token": csrf, "Origin": "null"}, None),
                                  ({"X-CSRF-Token": csrf, "Origin": "http://evil.example"},
                                   None)):
                answer = client.request(method, path, headers=headers, data=form)
                assert answer.status_code == 403, (method, template, headers, form)
        assert client.get(board.start_path).status_code == 200  # nothing logged it out


def test_no_route_answers_a_foreign_host_even_with_the_root_token(
        board: Dashboard, routes: list[tuple[str, str]]) -> None:
    """DNS rebinding: evil.example resolving to 127.0.0.1 reaches the port, never a page."""
    root = {"Authorization": f"Bearer {board.token}"}
    with board.client(logged_in=False) as client:
        for method, template in [*routes, ("GET", "/static/app.css")]:
            for host in ("evil.example", "evil.example:9119", "127.0.0.1.evil.example"):
                answer = client.request(method, filled(template), headers={**root, "Host": host})
                assert answer.status_code == 403, (method, template, host)
                assert board.token not in answer.text


def assert_guarded(answer: httpx.Response, where: str) -> None:
    policy = answer.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, where
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, where
    assert answer.headers.get("x-frame-options") == "DENY", where
    assert answer.headers.get("x-content-type-options") == "nosniff", where
    assert answer.headers.get("referrer-policy") in ("same-origin", "no-referrer"), where
    if answer.headers.get("content-type", "").startswith("text/html"):
        assert answer.headers.get("cache-control") == "no-store", where


def test_every_answer_carries_the_security_headers(
        board: Dashboard, routes: list[tuple[str, str]]) -> None:
    """Pages, errors (401, 403, 404, 405, 422), redirects and static files alike."""
    with board.client() as client:
        csrf = csrf_of(client.get(board.start_path).text)
        for method, template in routes:
            if template == "/logout":  # would end the session the loop goes on with
                continue
            for profile in ("default", "work", "nosuch"):
                answer = client.request(method, filled(template, profile),
                                        headers={"X-CSRF-Token": csrf})
                where = f"{method} {template} {profile} {answer.status_code}"
                assert answer.status_code < 500, where
                assert_guarded(answer, where)
        for path in ("/static/app.css", "/static/nosuch.js", "/nosuch", "/p/default/nosuch"):
            assert_guarded(client.get(path), path)
        assert_guarded(client.delete("/p/default/profiles"), "405")
    with board.client(logged_in=False) as stranger:
        assert_guarded(stranger.get(board.start_path), "401")
        assert_guarded(stranger.get(board.start_path, headers={"Host": "evil.example"}), "403")


def test_a_missing_skill_is_a_page_not_an_error(board: Dashboard) -> None:
    """The page for an unknown name (or a ``../`` one) says so with 404; it was a 500
    (the template's ``name`` value collided with ``Views.render``'s own argument)."""
    with board.client() as client:
        for name in ("nosuch", "..%2F..%2Fdashboard"):
            answer = client.get(f"/p/default/skills/{name}")
            assert answer.status_code == 404, (name, answer.status_code)


def test_the_session_cookie_is_strict_random_and_secure_behind_tls(board: Dashboard) -> None:
    ids = set()
    for proto, secure in (("http", False), ("https", True)):
        with board.client(logged_in=False) as client:
            opened = client.get(board.login_path, headers={"X-Forwarded-Proto": proto})
            cookie = opened.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
            assert ("; Secure" in cookie) is secure, cookie
            value = cookie.split(";", 1)[0].split("=", 1)[1]
            assert len(value) >= 43 and board.token not in cookie  # 32 random bytes
            ids.add(value)
    assert len(ids) == 2


def test_a_path_inside_a_name_never_leaves_its_directory(board: Dashboard) -> None:
    """Session ids, skill and experiment names, cron run names: ``../`` in every spelling
    reaches no file outside (the tokens are the prize)."""
    names = ("..%2F..%2Fdashboard%2Ftoken", "..%2F..%2F..%2Fdashboard%2Ftoken",
             "%2E%2E", "..", "..%5C..%5Ctoken", "%2Fetc%2Fpasswd")
    templates = ("/p/default/sessions/{}", "/p/default/sessions/{}/export",
                 "/p/default/skills/{}", "/p/default/experiments/{}", "/p/default/cron/{}",
                 "/p/default/cron/x/runs/{}", "/p/default/chat/{}")
    with board.client() as client:
        for template in templates:
            for name in names:
                answer = client.get(template.format(name))
                assert answer.status_code in (303, 400, 404, 422), (template, name, answer)
                assert board.token not in answer.text and "root:x:0" not in answer.text


def test_links_inside_a_skill_reach_nothing_outside_it(board: Dashboard) -> None:
    """A skill (written by the agent, or installed) whose files link to the root's token,
    to /etc, or whose whole directory is a link out of the home: its pages show and
    change nothing there."""
    skills = board.root / "skills"
    leaky = skills / "leaky"
    (leaky / "refs").mkdir(parents=True)
    (leaky / "SKILL.md").write_text("---\nname: leaky\ndescription: Leaks.\n---\n\n# leaky\n")
    (leaky / "token.md").symlink_to(board.root / "dashboard" / "token")
    (leaky / "etc").symlink_to("/etc")
    (leaky / "refs" / "up.md").symlink_to("../../../dashboard/token")
    outside = Path(tempfile.mkdtemp(prefix="hermes-outside-skill-", dir="/var/tmp"))
    (outside / "SKILL.md").write_text("---\nname: linked\ndescription: Out.\n---\n\n# x\n")
    (skills / "linked").symlink_to(outside)
    try:
        with board.client() as client:
            csrf = csrf_of(client.get("/p/default/skills").text)
            for name, file in (("leaky", "token.md"), ("leaky", "etc/passwd"),
                               ("leaky", "refs/up.md"), ("leaky", "../../dashboard/token"),
                               ("linked", "SKILL.md")):
                shown = client.get(f"/p/default/skills/{name}", params={"file": file})
                assert board.token not in shown.text and "root:x:0" not in shown.text, file
                edited = client.post(f"/p/default/skills/{name}/edit",
                                     data={"csrf_token": csrf, "file": file,
                                           "text": "overwritten\n"})
                assert edited.status_code < 500, (file, edited.status_code)
            assert (board.root / "dashboard" / "token").read_text().strip() == board.token
            assert "overwritten" not in (outside / "SKILL.md").read_text()
    finally:
        shutil.rmtree(leaky)
        (skills / "linked").unlink()
        shutil.rmtree(outside)


PAYLOAD = ("\"'><img src=x onerror=\"document.title='pwned'\">"
           "<div hx-post=\"/logout\" hx-trigger=\"load\">x</div>"
           "<script>document.title='pwned'</script>"
           "<a href=\"javascript:document.title='pwned'\">j</a>{{7*7}}</script>")
"""Stored XSS: markup (an htmx attribute would run with the page's anti-CSRF header even
under the CSP), a script, a ``javascript:`` link and a template expression."""


def write_payloads(environ: dict[str, str]) -> None:
    """The payload as a session title, message, tool call and result, a memory entry, a
    cron job's prompt, a skill's description and a config value of ``default``."""
    import subprocess
    import sys

    from hermes.sessions.store import SessionStore

    root = Path(environ["HOME"]) / ".hermes"
    root.mkdir(parents=True, exist_ok=True)
    with SessionStore(root / "state.db") as store:
        sid = store.create_session("cli", "gpt-4o", title=PAYLOAD[:190])
        store.add_messages(sid, [
            {"role": "user", "content": PAYLOAD},
            {"role": "assistant", "content": PAYLOAD, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": PAYLOAD})}}]},
            {"role": "tool", "content": PAYLOAD, "tool_call_id": "c1", "name": "terminal"}])
    (root / "memories").mkdir(exist_ok=True)
    (root / "memories" / "MEMORY.md").write_text(PAYLOAD + "\n")
    skill = root / "skills" / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: evil\ndescription: {json.dumps(PAYLOAD)}\n"
                                    f"---\n\n# evil\n\n{PAYLOAD}\n")
    (root / "config.yaml").write_text(f"provider:\n  model: {json.dumps(PAYLOAD)}\n")
    added = subprocess.run([sys.executable, "-m", "hermes", "cron", "add", "every 1d", PAYLOAD,
                            "-n", "evil-job"], env=environ, capture_output=True, text=True,
                           timeout=120)
    assert added.returncode == 0, added.stderr


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    with dashboard_for(tmp_path_factory.mktemp("poisoned"), prepare=write_payloads) as running:
        yield running


@pytest.mark.chromium
def test_stored_markup_runs_nowhere_in_the_browser(poisoned: Dashboard, chromium: str) -> None:
    from dashboard_support import browser_page
    from hermes.sessions.store import SessionStore

    with SessionStore(poisoned.root / "state.db") as store:
        sid = store.list_sessions(limit=None)[0].id
    job = json.loads((poisoned.root / "cron" / "jobs.json").read_text())["jobs"][0]["id"]
    paths = ["/p/default/sessions", f"/p/default/sessions/{sid}", f"/p/default/chat/{sid}",
             "/p/default/sessions?q=pwned", "/p/default/memory", "/p/default/cron",
             f"/p/default/cron/{job}", "/p/default/skills", "/p/default/skills/evil",
             "/p/default/config", "/p/default/profiles"]
    missing: list[str] = []
    with browser_page(chromium, poisoned) as page:
        for path in paths:
            page.goto(poisoned.url(path))
            page.wait_for_load_state("networkidle")
            assert page.title() != "pwned", path
            injected = ("img[src='x'], [hx-post='/logout'], a[href^='javascript:'], "
                        "main script:not([src]), body > div[hx-trigger]")
            assert page.locator(injected).count() == 0, path
            shown = page.locator("main").inner_text()
            assert "49" not in shown.split(), path
            if "onerror" not in page.content():
                missing.append(path)
        # the payload reached every page (the two lists show only names)
        assert missing == ["/p/default/cron", "/p/default/skills"], missing
        page.goto(poisoned.url("/p/default/profiles"))  # no injected POST logged it out
        assert page.locator("nav").count() > 0 and "token" not in page.url


@pytest.mark.chromium
def test_another_loopback_port_never_receives_the_session_cookie(
        board: Dashboard, chromium: str) -> None:
    """The agent starts a web server on 127.0.0.1 with its terminal and asks the user to
    open its 'report': the browser must not hand that server the dashboard's session
    (cookies do not isolate ports, RFC 6265 8.5: the cookie is set on the secret
    ``<label>.localhost`` only), neither at 127.0.0.1 nor at localhost."""
    import http.server
    import threading

    from dashboard_support import browser_page

    received: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            received.append(self.headers.get("cookie") or "")
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"report")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with browser_page(chromium, board) as page:
            assert page.context.cookies(), "the printed URL logged in"
            page.goto(f"http://127.0.0.1:{server.server_port}/report")
            page.goto(f"http://localhost:{server.server_port}/report")
    finally:
        server.shutdown()
    assert len(received) >= 2 and not any("hermes_dashboard" in cookie for cookie in received)


def test_an_unexpected_error_is_answered_with_the_security_headers(board: Dashboard) -> None:
    """A page that raises (none does today: defence in depth) gets a plain 500 that still
    carries the CSP and the rest; Starlette's own error answer would go out without them."""
    from starlette.testclient import TestClient

    from hermes.config.dashboard_schema import DashboardConfig
    from hermes.dashboard.app import create_app

    app = create_app(board.root, DashboardConfig(), environ=board.environ)

    def broken(profile: str) -> None:
        raise RuntimeError("a page's own bug, with a detail that must not be shown")

    app.add_api_route("/p/{profile}/broken", broken)
    with TestClient(app, base_url="http://127.0.0.1:9119",
                    raise_server_exceptions=False) as client:
        answer = client.get("/p/default/broken",
                            headers={"Authorization": f"Bearer {board.token}"})
    assert answer.status_code == 500
    assert "detail that must not be shown" not in answer.text
    assert_guarded(answer, "500")
