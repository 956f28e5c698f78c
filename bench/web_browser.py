"""The browser toolset's cost: ``browser_snapshot`` of a 2,000-node page, and a
navigate-then-snapshot round trip through our tools against Playwright itself.

Run from the repository root (needs Chromium on PATH):

    .venv/bin/python bench/web_browser.py                 # 30 rounds
    .venv/bin/python bench/web_browser.py --rounds 10 --json /tmp/browser.json

A server in a process of its own serves ``/list?n=I`` on 127.0.0.1: 1,000 list items,
each holding a link (2,000 elements besides the page's own). Two sides, each with its
own warm Chromium (the same executable), take turns round by round:

- ``tools``: ``browser_navigate`` then ``browser_snapshot`` through the tool registry's
  ``dispatch`` as the agent makes them (argument checks, the address check, the guard
  proxy every request goes through, the browser thread, paging, the fence, redaction,
  the result's cap); and, timed alone, ``browser_snapshot`` of the loaded page;
- ``playwright``: ``page.goto(url, wait_until="domcontentloaded")`` then
  ``page.aria_snapshot(mode="ai")`` on Playwright's async API, no proxy: the library's
  own time for the same two steps (the baseline of the target).

Two untimed rounds first. Reported: medians; the ratio of the round-trip medians.
Targets (issue 28): snapshot ≤ 150 ms median; round trip ≤ 1.3× Playwright. Exit
status 0 even if missed: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "runtime"))

SNAPSHOT_TARGET_MS = 150.0
ROUND_TRIP_TARGET = 1.3
ITEMS = 1000
PAGE = ("<!DOCTYPE html><html><head><title>Long list</title></head><body><h1>Items</h1><ul>"
        + "".join(f'<li><a href="#i{n}">Item number {n}</a></li>' for n in range(ITEMS))
        + "</ul></body></html>").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — the base's name
        return None

    def do_GET(self) -> None:  # noqa: N802 — the base's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)


def serve(port_out: Any, stop: Any) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_out.send(server.server_address[1])
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop.wait()
    server.shutdown()


class Tools:
    """Our side: a runtime with the ``browser`` toolset and the site allowed."""

    def __init__(self, base: Path, port: int) -> None:
        from hermes.config import compose_config
        from hermes.container import build_runtime
        from hermes.home import home_from_path
        from hermes.tools.context import ToolContext

        root = base / ".hermes"
        root.mkdir(parents=True)
        (root / "config.yaml").write_text(
            "defaults:\n  - override provider: custom\nprovider:\n  model: none\n"
            "  api_base: http://127.0.0.1:9/v1\n")
        environ = {"HOME": str(base), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
        home = home_from_path(root)
        config = compose_config(home, environ, [
            "toolsets.enabled=[browser]", f'web.allow_private=["127.0.0.1:{port}"]',
            "browser.snapshot_max_chars=200000"]).config
        self.runtime = build_runtime(home, config, environ).start()
        self.ctx = ToolContext.for_session(home, self.runtime.container.environment(),
                                           "bench", environ=environ, cwd=base)
        self.tools = self.runtime.container.tools()

    def call(self, tool: str, **args: Any) -> str:
        result = self.tools.dispatch(tool, args, self.ctx)
        if result.is_error:
            raise RuntimeError(result.content)
        return result.content

    def round_trip(self, url: str) -> float:
        started = time.perf_counter()
        self.call("browser_navigate", url=url)
        self.call("browser_snapshot")
        return time.perf_counter() - started

    def snapshot(self) -> float:
        started = time.perf_counter()
        self.call("browser_snapshot")
        return time.perf_counter() - started

    def close(self) -> None:
        self.runtime.close()


class Library:
    """Playwright's own side, on an event loop of this thread."""

    def __init__(self, executable: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._start(executable))

    async def _start(self, executable: str) -> None:
        from playwright.async_api import async_playwright

        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(executable_path=executable)
        self.page = await (await self.browser.new_context()).new_page()

    async def _round_trip(self, url: str) -> None:
        await self.page.goto(url, wait_until="domcontentloaded")
        await self.page.aria_snapshot(mode="ai")

    def round_trip(self, url: str) -> float:
        started = time.perf_counter()
        self.loop.run_until_complete(self._round_trip(url))
        return time.perf_counter() - started

    def snapshot(self) -> float:
        started = time.perf_counter()
        self.loop.run_until_complete(self.page.aria_snapshot(mode="ai"))
        return time.perf_counter() - started

    def close(self) -> None:
        self.loop.run_until_complete(self.browser.close())
        self.loop.run_until_complete(self.playwright.stop())
        self.loop.close()


def measure(port: int, rounds: int, base: Path) -> dict[str, list[float]]:
    from hermes.browser.backends import find_chromium

    executable = find_chromium(None)
    if executable is None:
        raise SystemExit("no Chromium on PATH (apt-get install chromium)")
    tools, library = Tools(base, port), Library(executable)
    times: dict[str, list[float]] = {"tools round trip": [], "playwright round trip": [],
                                     "tools snapshot": [], "playwright snapshot": []}
    try:
        for n in range(rounds + 2):
            url = f"http://127.0.0.1:{port}/list?n={n}"
            sides = [("tools round trip", tools.round_trip),
                     ("playwright round trip", library.round_trip)]
            for name, side in sides if n % 2 else reversed(sides):
                took = side(url)
                if n >= 2:
                    times[name].append(took)
            for name, snap in (("tools snapshot", tools.snapshot),
                               ("playwright snapshot", library.snapshot)):
                took = snap()
                if n >= 2:
                    times[name].append(took)
    finally:
        tools.close()
        library.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(sender, stop), daemon=True)
    server.start()
    port = receiver.recv()
    try:
        with tempfile.TemporaryDirectory() as base:
            times = measure(port, args.rounds, Path(base))
    finally:
        stop.set()
        server.join(5)
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    ratio = medians["tools round trip"] / medians["playwright round trip"]
    for name, value in medians.items():
        print(f"{name:24} median {value:7.1f} ms  (min {min(times[name]) * 1000:.1f})")
    snapshot_ok = medians["tools snapshot"] <= SNAPSHOT_TARGET_MS
    print(f"snapshot of a 2,000-node page: {medians['tools snapshot']:.1f} ms "
          f"(target ≤ {SNAPSHOT_TARGET_MS:g}: {'PASS' if snapshot_ok else 'MISS'})")
    print(f"navigate + snapshot: {ratio:.2f}x Playwright "
          f"(target ≤ {ROUND_TRIP_TARGET}: {'PASS' if ratio <= ROUND_TRIP_TARGET else 'MISS'})")
    if args.json:
        args.json.write_text(json.dumps({
            "medians_ms": medians, "ratio": ratio, "rounds": args.rounds,
            "python": platform.python_version(), "cpus": os.cpu_count()}, indent=2))


if __name__ == "__main__":
    main()
