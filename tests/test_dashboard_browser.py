"""The dashboard in the real Chromium: the printed URL logs in, the Profiles page shows,
the nav and the profile switcher work from the keyboard, and each page is photographed
(``dashboard_support.screenshots_dir``: not in the repository) at desktop and phone width,
light and dark."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dashboard_support import Dashboard, browser_page, dashboard_for, screenshot
from hermes.dashboard.pages import built

pytestmark = pytest.mark.chromium  # the system's Chromium (deselect: -m "not chromium")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    with dashboard_for(tmp_path_factory.mktemp("board"), profiles=("work",)) as running:
        yield running


def test_the_printed_url_logs_in_and_shows_the_profiles(board: Dashboard, chromium: str
                                                         ) -> None:
    with browser_page(chromium, board) as page:
        assert page.url == board.url(board.start_path)  # the token left the address bar
        [cookie] = page.context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.locator("h1").inner_text() == "Profiles"
        cards = page.locator(".card h2")
        assert cards.count() == 2 and "default" in cards.nth(0).inner_text()
        assert page.evaluate("typeof htmx") == "object"  # the vendored htmx ran under the CSP
        screenshot(page, "profiles")


def test_a_login_at_127_0_0_1_ends_with_the_cookie_on_the_label_host_only(
        board: Dashboard, chromium: str) -> None:
    """The printed URL's host is ``<secret label>.localhost``; the same URL opened at
    127.0.0.1 goes there (303, token kept) and the cookie is that name's alone, so no
    other server on the machine (whatever its port) is sent it."""
    from playwright.sync_api import sync_playwright

    label = board.host.partition(".localhost:")[0]
    assert len(label) >= 20 and label.isalnum() and board.token not in label
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            page = browser.new_context().new_page()
            page.goto(f"{board.address}{board.login_path}")
            assert page.url == board.url(board.start_path)  # on the label host, no token
            assert page.locator("h1").inner_text() == "Profiles"
            [cookie] = page.context.cookies()
            assert cookie["domain"] == f"{label}.localhost", cookie  # host-only
            assert page.context.cookies(board.address) == []
        finally:
            browser.close()


def test_the_nav_and_the_switcher_work_from_the_keyboard(board: Dashboard, chromium: str
                                                         ) -> None:
    with browser_page(chromium, board) as page:
        focused = []
        links = [section.title for section in built()]  # the pages, in the nav's order
        for _ in range(len(links) + 3):
            page.keyboard.press("Tab")
            focused.append(page.evaluate("document.activeElement.textContent.trim()"))
        assert focused[:-1] == ["Skip to content", "Hermes", *links], focused
        assert focused[-1] == "defaultwork"  # the switcher: "not yet" sections take no focus
        page.keyboard.press("ArrowDown")  # work
        page.keyboard.press("Tab")
        with page.expect_navigation():
            page.keyboard.press("Enter")  # the Switch button
        assert page.url == board.url("/p/work/profiles")
        assert "work" in page.locator(".card.current h2").inner_text()
        screenshot(page, "profiles-switched")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_phone_width_reads_without_sideways_scrolling(board: Dashboard, chromium: str,
                                                      scheme: str) -> None:
    with browser_page(chromium, board, width=375, height=740, color_scheme=scheme) as page:
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(21, 21, 23)") == (scheme == "dark"), background
        screenshot(page, f"profiles-phone-{scheme}")


def test_htmx_requests_carry_the_anti_csrf_token(board: Dashboard, chromium: str) -> None:
    """What later pages rely on: ``hx-headers`` on ``<body>`` puts the session's token on
    every htmx request; the same POST without it (plain ``fetch``) is refused."""
    with browser_page(chromium, board) as page:
        bare = page.evaluate("fetch('/logout', {method: 'POST'}).then(r => r.status)")
        assert bare == 403
        with page.expect_response("**/logout") as answered:
            page.evaluate("htmx.ajax('POST', '/logout', {source: 'body', target: 'main'})")
        assert answered.value.status == 200
        page.wait_for_selector("main h1:text('Logged out')")
        assert page.goto(board.url(board.start_path)).status == 401  # the session ended
