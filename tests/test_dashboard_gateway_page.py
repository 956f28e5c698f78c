"""The dashboard's Gateway page beside a real ``hermes gateway run`` serving two profiles:
one platform failed (shown with its reason, and in the recent errors), one serving; a
profile with no gateway; a pairing request approved and revoked in Chromium (a wrong code
refused with ``hermes pairing approve``'s own line); the page's POSTs need the anti-CSRF
token and stay within the token's profile."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard_support import Dashboard, csrf_of, dashboard_for, screenshot
from gateway_support import configure, gateway
from hermes.dashboard.tokens import Tokens
from hermes.gateway.messaging.pairing import PairingStore

NO_MODEL = "http://127.0.0.1:9/v1"  # no turn runs here: the model is never asked
NO_BOT_API = "http://127.0.0.1:9"  # nothing listens: telegram keeps reconnecting
CODES: dict[str, str] = {}


def fine_home(board: Dashboard) -> Path:
    return board.root / "profiles" / "fine"


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """Profiles open (its API server refused: a short key on 0.0.0.0) and fine (its API
    server serving, its telegram reconnecting to a Bot API nobody serves; one pairing
    request waiting), both in one running gateway; default has none."""
    def prepare(environ: dict[str, str]) -> None:
        root = Path(environ["HOME"]) / ".hermes"
        configure(root / "profiles" / "open", NO_MODEL, host="0.0.0.0", key="short-key")
        configure(root / "profiles" / "fine", NO_MODEL, platforms__enabled__telegram={
            "kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
            "settings": {"base_url": NO_BOT_API, "poll_timeout": 2}})
        with (root / "profiles" / "fine" / ".env").open("a") as env:
            env.write("TELEGRAM_BOT_TOKEN=123456:AAH-fake-token-abcdefghijklmnopq\n")
        issued = PairingStore(root / "profiles" / "fine" / "pairing").request(
            "telegram", "4242", "Ann")
        assert issued.code is not None
        CODES["telegram"] = issued.code

    with dashboard_for(tmp_path_factory.mktemp("board"), profiles=("open", "fine"),
                       prepare=prepare) as running, \
            gateway(running.environ, fine_home(running), ["--profiles", "open,fine"]):
        yield running


def test_failed_and_reconnecting_platforms_are_shown_with_their_reasons(board: Dashboard) -> None:
    with board.client() as client:
        failed = client.get("/p/open/gateway").text
        serving = client.get("/p/fine/gateway").text
        idle = client.get("/p/default/gateway").text
    failure = row_of(failed, "api_server")
    assert "failed" in failure and "API_SERVER_KEY" in failure, failure
    assert '"State" class="gw-running">serving<' in row_of(serving, "api_server")
    assert "0 turn(s) running" in serving
    reconnecting = row_of(serving, "telegram")
    assert "reconnecting" in reconnecting and "next attempt in" in reconnecting, reconnecting
    problems = serving[serving.index('id="problems"'):]
    assert "warning: platform unreachable at start; retrying with backoff" in problems
    assert "not running" in idle and "hermes -p default gateway run" in idle


def row_of(html: str, platform: str) -> str:
    """The platforms table's row of ``platform``."""
    row = html[html.index(f'id="platform-{platform}"'):]
    return row[:row.index("</tr>")]


@pytest.mark.chromium
def test_a_pairing_request_approved_and_revoked_in_the_page(board: Dashboard,
                                                           page: Any) -> None:
    store = PairingStore(fine_home(board) / "pairing")
    page.goto(board.url("/p/fine/gateway"))
    assert "4242" in page.inner_text("#pending") and "Ann" in page.inner_text("#pending")
    screenshot(page, "gateway")

    cli = subprocess.run([sys.executable, "-m", "hermes", "-p", "fine", "pairing", "approve",
                          "telegram", "WRONGCDE"], env=board.environ, capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 2
    page.fill("#approve-code", "WRONGCDE")
    page.click("text=Approve")
    assert page.inner_text(".gw-error") == cli.stderr.strip().removeprefix("error: ")
    assert not store.is_paired("telegram", "4242")

    page.fill("#approve-code", CODES["telegram"].lower())  # typed as the CLI takes it
    page.click("text=Approve")
    assert "paired telegram user 4242 (Ann)" in page.inner_text(".gw-done")
    assert store.is_paired("telegram", "4242") and "4242" in page.inner_text("#paired")

    page.get_by_role("button", name="Revoke telegram user 4242").click()
    assert "revoked telegram user 4242" in page.inner_text(".gw-done")
    assert not store.is_paired("telegram", "4242")
    assert page.locator("#paired").count() == 0


@pytest.mark.chromium
def test_the_gateway_page_reads_at_phone_width(board: Dashboard, page: Any) -> None:
    page.set_viewport_size({"width": 375, "height": 740})
    try:
        page.goto(board.url("/p/fine/gateway"))
        assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0
        screenshot(page, "gateway-phone")
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})


def test_pairing_posts_need_the_token_and_stay_in_their_profile(board: Dashboard) -> None:
    store = PairingStore(fine_home(board) / "pairing")
    issued = store.request("telegram", "777", "Bob")
    assert issued.code is not None
    with board.client() as client:
        csrf = csrf_of(client.get("/p/fine/gateway").text)
        refused = client.post("/p/fine/gateway/approve",
                              data={"platform": "telegram", "code": issued.code})
        assert refused.status_code == 403
    open_token = Tokens(board.root).profile_token("open")
    with board.client(logged_in=False) as client:
        other = client.post("/p/fine/gateway/approve", headers={
            "Authorization": f"Bearer {open_token}"},
            data={"platform": "telegram", "code": issued.code, "csrf_token": csrf})
        assert other.status_code == 403
    assert not store.is_paired("telegram", "777")
