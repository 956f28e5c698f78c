"""Starting ``hermes dashboard`` for a test, and a logged-in Chromium page on it.

For every dashboard page's tests:

    from dashboard_support import dashboard_for, browser_page, screenshot

    @pytest.fixture(scope="module")
    def board(tmp_path_factory):
        with dashboard_for(tmp_path_factory.mktemp("board")) as board:
            yield board

    def test_x(board, chromium):
        with browser_page(chromium, board) as page:   # logged in with the printed URL
            page.goto(board.url("/p/default/sessions"))
            screenshot(page, "sessions")

``dashboard_for`` runs the real CLI (``python -m hermes dashboard --port 0 --no-open``) in a
fresh root under the given directory and waits for the URL it prints.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

URL_LINE = re.compile(r"(http://\S+?)(/p/[^/?]+/\w+)\?token=(\S+)")
START_TIMEOUT = 60.0


def csrf_of(html: str) -> str:
    """The anti-CSRF token a page carries (its forms' ``csrf_token`` field), for a test's
    POST (as a form field, or the ``X-CSRF-Token`` header htmx sends)."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, html[:2000]
    return found[1]


def environ_for(user_home: Path) -> dict[str, str]:
    """A clean environment whose ``$HOME`` (root ``$HOME/.hermes``) is ``user_home``, as
    conftest's ``environ`` fixture makes one (usable from module-scoped fixtures)."""
    user_home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(user_home), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8",
            "HERMES_NO_DAEMON": "1"}


@dataclass
class Dashboard:
    """A running ``hermes dashboard``: where it listens and the URL it printed."""

    process: subprocess.Popen[str]
    base: str
    """``http://<label>.localhost:PORT``: the printed URL's host, the one the browser
    opens (Chromium resolves ``*.localhost`` to loopback itself)."""
    start_path: str
    """The page the printed URL opens, e.g. ``/p/default/profiles``."""
    token: str
    environ: dict[str, str]
    output: list[str]
    """What it printed on standard output so far."""
    reader: threading.Thread

    @property
    def root(self) -> Path:
        return Path(self.environ["HOME"]) / ".hermes"

    @property
    def printed_url(self) -> str:
        return f"{self.base}{self.start_path}?token={self.token}"

    @property
    def login_path(self) -> str:
        """The printed URL without its scheme and host, for a client's ``get``."""
        return f"{self.start_path}?token={self.token}"

    def url(self, path: str) -> str:
        return self.base + path

    @property
    def host(self) -> str:
        """The printed URL's ``Host``: ``<label>.localhost:PORT``."""
        return self.base.removeprefix("http://")

    @property
    def address(self) -> str:
        """``http://127.0.0.1:PORT``: where an HTTP client connects (the system's resolver
        may not resolve ``*.localhost``)."""
        return f"http://127.0.0.1:{self.base.rpartition(':')[2]}"

    @contextmanager
    def client(self, *, logged_in: bool = True, **options: Any) -> Iterator[httpx.Client]:
        """An HTTP client on the dashboard, connecting to 127.0.0.1 and sending the
        printed URL's ``Host`` (as a browser opening it does); ``logged_in``: holding a
        session cookie (the printed URL was opened)."""
        headers = {"Host": self.host, **options.pop("headers", {})}
        with httpx.Client(base_url=self.address, follow_redirects=False, timeout=30,
                          headers=headers, **options) as client:
            if logged_in:
                answer = client.get(self.login_path)
                assert answer.status_code == 303, answer.text
            yield client

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30) -> tuple[int, str, str]:
        """Send ``sig`` (Ctrl-C by default); the exit code and the rest of its output."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(timeout=timeout)
        self.reader.join(timeout=timeout)
        assert self.process.stderr is not None
        return self.process.returncode, "".join(self.output), self.process.stderr.read()


def start_dashboard(environ: dict[str, str], *args: str, profile: str | None = None
                    ) -> Dashboard:
    """``hermes [-p PROFILE] dashboard --port 0 --no-open ARGS`` started; returns once it
    printed its URL (fails with its output if it exits or says nothing in time)."""
    flags = ["-p", profile] if profile else []
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes", *flags, "dashboard", "--port", "0", "--no-open",
         *args], env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    output: list[str] = []
    reader = threading.Thread(target=_collect, args=(process.stdout, output), daemon=True)
    reader.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not (found := URL_LINE.search("".join(output))):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            _, err = process.communicate(timeout=10)
            raise AssertionError(f"hermes dashboard printed no URL (exit {process.returncode})"
                                 f": {output} {err}")
        time.sleep(0.05)
    return Dashboard(process, found[1], found[2], found[3], environ, output, reader)


def _collect(stream: Any, output: list[str]) -> None:
    for line in iter(stream.readline, ""):
        output.append(line)


@contextmanager
def dashboard_for(user_home: Path, *args: str, profiles: tuple[str, ...] = (),
                  profile: str | None = None,
                  prepare: Callable[[dict[str, str]], None] | None = None
                  ) -> Iterator[Dashboard]:
    """A dashboard on a fresh root under ``user_home`` with the named ``profiles`` created
    (through ``hermes profile create``), stopped afterwards. ``prepare(environ)`` runs
    before it starts: write a home's config (``conftest.write_fake_provider``), sessions,
    skills, jobs there."""
    environ = environ_for(user_home)
    for name in profiles:
        created = subprocess.run([sys.executable, "-m", "hermes", "profile", "create", name],
                                 env=environ, capture_output=True, text=True, timeout=120)
        assert created.returncode == 0, created.stderr
    if prepare is not None:
        prepare(environ)
    board = start_dashboard(environ, *args, profile=profile)
    try:
        yield board
    finally:
        board.stop()


@contextmanager
def browser_page(chromium: str, board: Dashboard, *, width: int = 1280, height: int = 800,
                 color_scheme: str = "light") -> Iterator[Any]:
    """A Playwright page in the system's Chromium, logged in through the printed URL."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": height},
                                          color_scheme=color_scheme)  # type: ignore[arg-type]
            page = context.new_page()
            page.goto(board.printed_url)
            yield page
        finally:
            browser.close()


def screenshots_dir() -> Path:
    """Where a test run's screenshots go: ``$HERMES_TEST_SCREENSHOTS``, else a directory
    in the system's temp (never the repository)."""
    import tempfile

    chosen = os.environ.get("HERMES_TEST_SCREENSHOTS") or \
        str(Path(tempfile.gettempdir()) / f"hermes-test-screenshots-{os.getuid()}")
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    return path


def screenshot(page: Any, name: str) -> Path:
    """A full-page PNG of ``page`` as ``dashboard-<name>.png`` in ``screenshots_dir()``."""
    path = screenshots_dir() / f"dashboard-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.fixture(scope="module")
def page(board: Dashboard, chromium: str) -> Iterator[Any]:
    """A logged-in Chromium page of the module's ``board`` fixture, one per module (offered
    to every module by conftest; a module needing another defines its own)."""
    with browser_page(chromium, board) as opened:
        yield opened

