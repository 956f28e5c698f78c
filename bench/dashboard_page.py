"""Dashboard benchmark, browser side: first contentful paint of the Sessions page.

Run from the repository root (after, or instead of, ``bench/dashboard.py``, whose
generator and cached database it reuses):

    .venv/bin/python bench/dashboard_page.py                  # 100,000 sessions, 2M messages
    .venv/bin/python bench/dashboard_page.py --scale 0.05     # a quick run

A root is made in a temporary directory with the cached ``state.db`` hard-linked as the
default profile's; the real ``hermes dashboard`` (``--port 0 --no-open``) serves it on
loopback, and the system's Chromium (headless, through Playwright) logs in with the
printed URL once, then loads the page ``--rounds`` times in that tab, each a new document
(static files cached, the page itself never: ``no-store``), reading
``performance.getEntriesByName('first-contentful-paint')``. Also reported: the page's
server time as the browser saw it (navigation timing ``responseEnd - requestStart``), the
same GET over HTTP from Python, and the data layer's call alone (in-process), so the page's
cost over its query shows; and the FCP of a filtered list, a search and the longest
session's page (its first 200 messages). Target (issue 29): FCP <= 500 ms (p95).
Exit status is 0 even if the target fails: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
TARGET_FCP_MS = 500.0
PAGES = {"sessions page": "/p/default/sessions",
         "sessions page, source=telegram": "/p/default/sessions?source=telegram",
         "search page, q=deploy": "/p/default/sessions?q=deploy"}
FCP = """() => new Promise(done => {
  const n = performance.getEntriesByType('navigation')[0];
  const answer = () => {
    const e = performance.getEntriesByName('first-contentful-paint')[0];
    if (e) done([e.startTime, n.responseEnd - n.requestStart]);
    return e;
  };
  if (answer()) return;
  new PerformanceObserver(() => answer()).observe({type: 'paint', buffered: true});
  setTimeout(() => done([null, n.responseEnd - n.requestStart]), 5000);
})"""


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


data = _load("bench_dashboard", REPO / "bench" / "dashboard.py")
sys.path.insert(0, str(REPO / "tests"))
from dashboard_support import environ_for, start_dashboard  # noqa: E402


def database(scale: float) -> Path:
    """The generated ``state.db`` (``bench/dashboard.py``'s cache, built if missing)."""
    sessions, messages = round(data.SESSIONS * scale), round(data.MESSAGES * scale)
    path = data.cache_path(sessions, messages)
    if not path.is_file():
        print(f"generating {sessions:,} sessions / {messages:,} messages ...", flush=True)
        data.generate(path, sessions, messages)
    return path


def root_with(db: Path, where: Path) -> dict[str, str]:
    """An environment whose root's default profile has ``db`` (hard-linked) as state.db."""
    environ = environ_for(where / "user")
    root = where / "user" / ".hermes"
    root.mkdir(parents=True)
    try:
        os.link(db, root / "state.db")
    except OSError:  # another file system
        shutil.copy2(db, root / "state.db")
    return environ


def with_longest_session(db: Path) -> dict[str, str]:
    """``PAGES`` and the page of the session with the most messages (its first part)."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        longest, count = conn.execute("SELECT id, message_count FROM sessions ORDER BY "
                                      "message_count DESC LIMIT 1").fetchone()
    return {**PAGES, f"a session's page ({count:,} messages)": f"/p/default/sessions/{longest}"}


def browser_figures(board: Any, rounds: int, pages: dict[str, str]) -> list[Any]:
    from playwright.sync_api import sync_playwright

    figures = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            tab = context.new_page()
            tab.goto(board.printed_url)  # logs in: the session cookie
            for name, path in pages.items():
                paints, server = [], []
                for i in range(rounds + 1):  # the first round warms up, untimed
                    tab.goto("about:blank")
                    tab.goto(board.url(path), wait_until="load")  # a new document each time
                    fcp, response = tab.evaluate(FCP)
                    if fcp is None:
                        raise SystemExit(f"no first-contentful-paint entry for {path}")
                    if i:
                        paints.append(fcp)
                        server.append(response)
                target = TARGET_FCP_MS if name == "sessions page" else None
                figures += [data.Figure(f"FCP: {name}", paints, target),
                            data.Figure(f"  request to response end: {name}", server)]
        finally:
            browser.close()
    return figures


def http_figures(board: Any, db: Path, rounds: int) -> list[Any]:
    """The page over HTTP from Python, and the data layer's call for it in-process."""
    from hermes.dashboard import queries
    from hermes.sessions import SessionStore

    with board.client() as client:  # logged in; to 127.0.0.1 with the label host's Host
        client.get(PAGES["sessions page"])
        page = data.timed(lambda: client.get(PAGES["sessions page"]).raise_for_status(),
                          rounds)
    with SessionStore(db) as store:
        queries.session_page(store)
        query = data.timed(lambda: queries.session_page(store, limit=50), rounds)
    return [data.Figure("HTTP GET sessions page (python client)", page),
            data.Figure("  its query: queries.session_page(limit=50)", query)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="Fraction of 100,000 sessions / 2M messages.")
    parser.add_argument("--rounds", type=int, default=20, help="Page loads per figure.")
    args = parser.parse_args()
    db = database(args.scale)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-page-") as where:
        environ = root_with(db, Path(where))
        started = time.perf_counter()
        board = start_dashboard(environ)
        print(f"dashboard up in {time.perf_counter() - started:.1f} s on {board.base}",
              flush=True)
        try:
            figures = browser_figures(board, args.rounds, with_longest_session(db)) + \
                http_figures(board, Path(where) / "user" / ".hermes" / "state.db",
                             args.rounds)
        finally:
            board.stop()
    for figure in figures:
        print(figure.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
