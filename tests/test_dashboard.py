"""``hermes dashboard`` over real HTTP: the token, the session cookie, the anti-CSRF
token, foreign ``Host``/``Origin``, profiles kept apart, the CLI's start and stop."""

from __future__ import annotations

import hashlib
import re
import signal
import socket
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard_support import Dashboard, csrf_of, dashboard_for, environ_for, start_dashboard
from hermes.dashboard.pages import SECTIONS
from hermes.fsutil import file_mode
from hermes.sessions.store import SessionStore

STATIC = Path(__file__).resolve().parent.parent / "runtime" / "hermes" / "dashboard" / "static"
PAGES = ("/", "/p/default/profiles", "/p/work/profiles", "/static/app.css",
         "/switch?to=work")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One dashboard (root token) on a root with the profiles default and work (which has
    two sessions)."""
    with dashboard_for(tmp_path_factory.mktemp("board"), profiles=("work",),
                       prepare=two_sessions_in_work) as running:
        yield running


def two_sessions_in_work(environ: dict[str, str]) -> None:
    db = Path(environ["HOME"]) / ".hermes" / "profiles" / "work" / "state.db"
    with SessionStore(db) as store:
        store.create_session("cli", "gpt-4o")
        store.create_session("telegram", "gpt-4o")


@pytest.mark.parametrize("auth", [None, "Bearer wrong-token", "Basic x"])
def test_without_the_token_nothing_is_served(board: Dashboard, auth: str | None) -> None:
    with board.client(logged_in=False) as client:
        for path in PAGES:
            answer = client.get(path, headers={"Authorization": auth} if auth else {})
            assert answer.status_code == 401, (path, answer.text)
            assert "work" not in answer.text and "gpt" not in answer.text
        wrong = client.get("/p/default/profiles?token=not-the-token")
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        posted = client.post(f"/logout?token={board.token}")  # only a GET logs in
        assert posted.status_code == 401 and "set-cookie" not in posted.headers


def test_the_token_opens_a_session_cookie_and_leaves_the_url(board: Dashboard) -> None:
    with board.client(logged_in=False) as client:
        opened = client.get(board.login_path)
        assert opened.status_code == 303
        assert opened.headers["location"] == board.start_path  # the token is gone
        cookie = opened.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        page = client.get(opened.headers["location"])
        assert page.status_code == 200 and "<h1>Profiles</h1>" in page.text
        assert 'href="/p/work/profiles"' in page.text  # the root token sees every profile
        default_card, work_card = page.text.split('href="/p/work/profiles"', 1)
        assert re.search(r"<dt>Sessions</dt><dd>2</dd>", work_card), work_card
        assert re.search(r"<dt>Sessions</dt><dd>0</dd>", default_card), default_card
        assert not (board.root / "state.db").exists()  # read, never made
        assert all(f'href="/p/default/{s.name}"' in page.text for s in SECTIONS)  # the nav
        assert "content-security-policy" in page.headers
        assert client.get("/").headers["location"] == "/p/default/profiles"
        assert client.get("/switch?to=work&section=profiles").headers["location"] == \
            "/p/work/profiles"


def test_the_printed_url_is_the_label_host_and_only_it_sets_the_cookie(
        board: Dashboard) -> None:
    """Cookies do not isolate ports: a cookie of 127.0.0.1 or localhost would reach every
    server there. The printed URL's host is the token's secret ``<label>.localhost``; a
    login at another loopback name is sent there, token kept, with no cookie."""
    label, _, port = board.host.partition(".localhost:")
    assert len(label) >= 20 and label.isalnum() and port == board.address.rpartition(":")[2]
    with board.client(logged_in=False) as client:
        for name in ("127.0.0.1", "localhost", "[::1]"):
            sent = client.get(board.login_path, headers={"Host": f"{name}:{port}"})
            assert sent.status_code == 303 and "set-cookie" not in sent.headers, name
            assert sent.headers["location"] == board.url(board.login_path), name
            bearer = client.get(board.start_path, headers={
                "Host": f"{name}:{port}", "Authorization": f"Bearer {board.token}"})
            assert bearer.status_code == 200, name  # scripts need no label
        opened = client.get(board.login_path)  # Host: the label's
        assert opened.status_code == 303 and "Domain" not in opened.headers["set-cookie"]
        for host in (f"x{label}.localhost:{port}", f"nosuch.localhost:{port}"):
            assert client.get(board.login_path, headers={"Host": host}).status_code == 403


def test_where_the_label_host_does_not_open_the_way_out_is_said(board: Dashboard) -> None:
    """A browser that does not resolve ``*.localhost`` (older Safari) cannot open the
    printed URL: the line under it, and a 401 at 127.0.0.1, name ``cookie_host``."""
    assert ("If the browser cannot open that address (older Safari does not resolve "
            "*.localhost): dashboard.cookie_host: loopback (README: Dashboard).") in \
        "".join(board.output)
    port = board.address.rpartition(":")[2]
    with board.client(logged_in=False) as client:
        at_ip = client.get("/", headers={"Host": f"127.0.0.1:{port}"})
        assert at_ip.status_code == 401
        assert "(older Safari) needs dashboard.cookie_host: loopback, at a risk the " \
               "README's Dashboard section states." in at_ip.text
        at_label = client.get("/")
        assert at_label.status_code == 401 and "cookie_host" not in at_label.text
        opened = client.get(board.login_path)
        assert opened.headers["set-cookie"].startswith(f"hermes_dashboard_{port}=")


def test_a_bearer_token_is_a_login_too(board: Dashboard) -> None:
    with board.client(logged_in=False) as client:
        answer = client.get("/p/work/profiles",
                            headers={"Authorization": f"Bearer {board.token}"})
        assert answer.status_code == 200 and "<h1>Profiles</h1>" in answer.text
        assert "set-cookie" not in answer.headers


@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"},
                                     {"Origin": "null"},
                                     {"Host": "evil.example"},
                                     {"Host": "evil.example:9119"}])
def test_a_foreign_host_or_origin_is_refused(board: Dashboard, headers: dict[str, str]
                                             ) -> None:
    with board.client() as client:
        answer = client.get("/p/default/profiles", headers=headers)
        assert answer.status_code == 403 and "Profiles" not in answer.text
        rebound = client.get(board.login_path, headers=headers)  # no session for it
        assert rebound.status_code == 403 and "set-cookie" not in rebound.headers
        assert client.get("/p/default/profiles").status_code == 200  # the session stays


def test_a_post_without_the_anti_csrf_token_is_refused(board: Dashboard) -> None:
    with board.client() as client:
        csrf = csrf_of(client.get(board.start_path).text)
        for refused in (client.post("/logout"),
                        client.post("/logout", data={"csrf_token": "wrong"}),
                        client.post("/logout", headers={"X-CSRF-Token": "wrong"})):
            assert refused.status_code == 403, refused.text
        assert client.get(board.start_path).status_code == 200  # still logged in
        assert client.post("/logout", data={"csrf_token": csrf}).status_code == 200
        assert client.get(board.start_path).status_code == 401  # the session ended
    with board.client() as client:
        csrf = csrf_of(client.get(board.start_path).text)
        assert client.post("/logout", headers={"X-CSRF-Token": csrf}).status_code == 200


def test_the_token_is_kept_private_and_reused(board: Dashboard, tmp_path: Path) -> None:
    token_file = board.root / "dashboard" / "token"
    assert token_file.read_text().strip() == board.token
    assert file_mode(token_file) == 0o600 and file_mode(token_file.parent) == 0o700
    second = start_dashboard(board.environ)  # a restart prints the same token
    try:
        assert second.token == board.token and second.base != board.base
    finally:
        second.stop()


def test_a_profile_token_opens_that_profile_only(board: Dashboard) -> None:
    work = start_dashboard(board.environ, profile="work")
    try:
        assert work.start_path == "/p/work/profiles" and work.token != board.token
        token_file = board.root / "profiles" / "work" / "dashboard" / "profile-token"
        assert file_mode(token_file) == 0o600 and token_file.read_text().strip() == work.token
        with work.client() as client:
            own = client.get("/p/work/profiles")
            assert own.status_code == 200 and 'value="default"' not in own.text
            for path in ("/p/default/profiles", "/switch?to=default", "/p/nosuch/profiles"):
                other = client.get(path)
                assert other.status_code == 403, path
                assert "default" not in other.text.replace("/", " ").split()
            assert client.get("/").headers["location"] == "/p/work/profiles"
        with work.client(logged_in=False) as client:  # the root token sees both here too
            answer = client.get("/p/default/profiles",
                                headers={"Authorization": f"Bearer {board.token}"})
            assert answer.status_code == 200
    finally:
        work.stop()


def test_exports_and_clones_leave_the_tokens_behind(board: Dashboard, tmp_path: Path
                                                   ) -> None:
    """The root is the default profile's home: its export must not carry the tokens."""
    start_dashboard(board.environ, profile="default").stop()  # default's own token too
    archive = tmp_path / "default.tar.gz"
    for args in (("profile", "export", "default", "-o", str(archive)),
                 ("profile", "create", "copy", "--from", "default", "--clone-all")):
        done = subprocess.run([sys.executable, "-m", "hermes", *args], env=board.environ,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    with tarfile.open(archive) as tar:
        assert not [n for n in tar.getnames() if "/dashboard" in n], tar.getnames()
    assert not (board.root / "profiles" / "copy" / "dashboard").exists()


def test_ctrl_c_stops_it_cleanly_and_beyond_loopback_it_warns(board: Dashboard) -> None:
    wide = start_dashboard(board.environ, "--host", "0.0.0.0")
    with wide.client() as client:
        assert client.get(wide.start_path).status_code == 200
    code, out, err = wide.stop(signal.SIGINT)
    assert code == 0 and out.rstrip().endswith("hermes dashboard: stopped"), (out, err)
    assert "beyond loopback" in err and "TLS" in err and "Traceback" not in err
    assert out.count(wide.token) == 1 and wide.token not in err  # said once, logged never


def test_a_busy_port_is_one_line_and_exit_2(hermes_subprocess) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = hermes_subprocess("dashboard", "--port", str(port), "--no-open")
    assert result.returncode == 2, result.stdout
    line = result.stderr.strip()
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}") and "\n" not in line
    assert "--port" in line and result.stdout == ""


def test_an_address_this_machine_lacks_is_one_line_and_exit_2(hermes_subprocess) -> None:
    result = hermes_subprocess("dashboard", "--host", "203.0.113.9", "--port", "0",
                               "--no-open")  # TEST-NET-3: no machine has it
    assert result.returncode == 2 and result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("error: cannot listen on 203.0.113.9:0") and "\n" not in line
    assert "--host 127.0.0.1" in line


def test_a_bad_dashboard_setting_is_one_line_and_exit_2(hermes_subprocess, root: Path
                                                        ) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("dashboard:\n  port: 70000\n")
    result = hermes_subprocess("dashboard", "--no-open")
    assert result.returncode == 2
    assert "dashboard.port" in result.stderr and "Traceback" not in result.stderr
    assert not (root / "dashboard").exists()  # nothing written


def test_the_vendored_htmx_is_the_recorded_one() -> None:
    recorded = (STATIC / "VENDORED.md").read_text()
    digest = hashlib.sha256((STATIC / "htmx.min.js").read_bytes()).hexdigest()
    assert f"`{digest}`" in recorded and "| 2.0.11 |" in recorded


def test_help_and_environ_for(hermes_subprocess, user_home: Path) -> None:
    shown = hermes_subprocess("dashboard", "--help").stdout
    assert "--host" in shown and "--port" in shown and "--no-open" in shown
    assert environ_for(user_home)["HOME"] == str(user_home)


LIGHT_START = """
import os, sys
from hermes.cli.main import build_app
from hermes.config import compose_config
from hermes.home import resolve_home
import hermes.cli.dashboard_cmd, hermes.dashboard, hermes.config.dashboard_schema
print(compose_config(resolve_home(None, os.environ), os.environ).config.dashboard.port)
print(sorted(m for m in ("fastapi", "starlette", "jinja2", "uvicorn") if m in sys.modules))
"""


def test_the_cli_and_config_load_no_web_framework(environ: dict[str, str]) -> None:
    """``hermes --help``, the command's module and composing config import neither
    FastAPI nor Jinja2: only starting the dashboard does."""
    proc = subprocess.run([sys.executable, "-c", LIGHT_START], env=environ,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["9119", "[]"]
