"""``dashboard.cookie_host: loopback``, the opt-in for a browser that does not resolve
``*.localhost`` (older Safari): the printed URL is ``http://127.0.0.1:PORT/...``, said
with the risk it takes, and the login stays there, its cookie named with the port and a
tag of the token (neither the token nor its label). In the real Chromium and over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard_support import Dashboard, dashboard_for
from hermes.dashboard.tokens import cookie_tag, label_of


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    def prepare(environ: dict[str, str]) -> None:
        root = Path(environ["HOME"]) / ".hermes"
        root.mkdir(parents=True, exist_ok=True)
        (root / "config.yaml").write_text("dashboard:\n  cookie_host: loopback\n")

    with dashboard_for(tmp_path_factory.mktemp("loopback"), prepare=prepare) as running:
        yield running


def port_of(board: Dashboard) -> str:
    return board.address.rpartition(":")[2]


def test_the_printed_url_is_at_127_0_0_1_and_says_the_risk(board: Dashboard) -> None:
    assert board.base == board.address  # http://127.0.0.1:PORT, no label
    assert ("dashboard.cookie_host is loopback: every server on 127.0.0.1, on any port, "
            "receives this dashboard's session cookie (README: Dashboard).") in \
        "".join(board.output)


def test_a_login_at_a_loopback_name_sets_the_cookie_there(board: Dashboard) -> None:
    name = f"hermes_dashboard_{port_of(board)}_{cookie_tag(board.token)}"
    with board.client(logged_in=False) as client:
        for host in ("127.0.0.1", "localhost"):
            opened = client.get(board.login_path, headers={"Host": f"{host}:{port_of(board)}"})
            assert opened.status_code == 303, host
            assert opened.headers["location"] == board.start_path  # stays, token gone
            assert opened.headers["set-cookie"].startswith(f"{name}=")
            assert "Domain" not in opened.headers["set-cookie"]
        client.cookies.clear()
        missing = client.get("/", headers={"Host": f"127.0.0.1:{port_of(board)}"})
        assert missing.status_code == 401 and "cookie_host" not in missing.text


@pytest.mark.chromium
def test_the_login_works_at_127_0_0_1_in_the_browser(board: Dashboard, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            page = browser.new_context().new_page()
            page.goto(board.printed_url)
            assert page.url == f"{board.address}{board.start_path}"  # no token left
            assert page.locator("h1").inner_text() == "Profiles"
            [cookie] = page.context.cookies()
            assert cookie["domain"] == "127.0.0.1" and cookie["httpOnly"]
            assert cookie["sameSite"] == "Strict"
            assert cookie["name"] == f"hermes_dashboard_{port_of(board)}_" \
                                     f"{cookie_tag(board.token)}"
            assert label_of(board.token) not in cookie["name"]
            page.goto(f"{board.address}/p/default/chat")  # a page beyond the first
            assert page.locator("h1").inner_text() == "Chat"
        finally:
            browser.close()
