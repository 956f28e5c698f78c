"""The browser's other backends on the real Chromium: ``cdp`` (a browser the user runs,
reached at ``browser.cdp_url``) and a plugin's browser provider (hermes-agent's
``register_browser_provider``), each still under the address rules; and
``browser.persist`` keeping cookies in the home between sessions."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugin_support import make_runtime, write_plugin
from test_browser import Handler, dispatch
from webpages import WebPages, webpages  # noqa: F401 — the fixture

pytestmark = pytest.mark.chromium  # the system's Chromium (deselect: -m "not chromium")


@pytest.fixture(scope="module")
def running_browser(chromium: str, tmp_path_factory: pytest.TempPathFactory  # noqa: F811
                    ) -> Iterator[str]:
    """A headless Chromium of the user's with remote debugging; its ws:// endpoint."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    process = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    endpoint = ""
    for line in process.stderr:
        found = re.search(r"DevTools listening on (ws://\S+)", line)
        if found:
            endpoint = found.group(1)
            break
    assert endpoint, "Chromium printed no DevTools endpoint"
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


def runtime_of(tmp_path: Path, pages: WebPages, *overrides: str) -> Any:
    environ = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    runtime = make_runtime(tmp_path / ".hermes", environ, "http://127.0.0.1:9/v1",
                           "toolsets.enabled=[browser]", f'web.allow_private=["{pages.allow}"]',
                           *overrides).start()
    return runtime, environ


def call(runtime: Any, environ: dict[str, str], cwd: Path, tool: str, session: str = "s1",
         **args: Any) -> dict[str, Any]:
    result = dispatch(runtime, environ, cwd, tool, session, args)
    parsed: dict[str, Any] = json.loads(result.content)
    return parsed


def test_cdp_drives_the_users_browser_under_the_address_rules(
        running_browser: str, tmp_path: Path, webpages: WebPages) -> None:  # noqa: F811
    http_endpoint = "http://" + running_browser.removeprefix("ws://").split("/", 1)[0]
    runtime, environ = runtime_of(tmp_path, webpages, "browser=cdp",
                                  f"browser.cdp_url={http_endpoint}")
    try:
        opened = call(runtime, environ, tmp_path, "browser_navigate", url=webpages.url("/form"))
        assert opened.get("status") == 200, opened
        assert 'textbox "Name"' in call(runtime, environ, tmp_path, "browser_snapshot")["content"]
        redirected = call(runtime, environ, tmp_path, "browser_navigate",
                          url=webpages.url("/redirect-loopback"))
        assert "error" in redirected and "\n" not in redirected["error"], redirected
        assert not [p for p in webpages.requests if p.startswith("INTERNAL")]
    finally:
        runtime.close()


PROVIDER = """
import json
from pathlib import Path

LOG = Path(__file__).parent / "sessions.log"


class Remote:
    name = "remote-chromium"

    def is_available(self):
        return True

    def create_session(self, task_id):
        with LOG.open("a") as log:
            log.write(json.dumps({"create": task_id}) + "\\n")
        return {"cdp_url": "ENDPOINT", "bb_session_id": "bb-" + task_id}

    def close_session(self, session_id):
        with LOG.open("a") as log:
            log.write(json.dumps({"close": session_id}) + "\\n")
        return True


def register(ctx):
    ctx.register_browser_provider(Remote())
"""


def test_a_plugins_browser_provider_gives_each_session_a_browser(
        running_browser: str, tmp_path: Path, webpages: WebPages) -> None:  # noqa: F811
    plugin = write_plugin(tmp_path / ".hermes", "remote",
                          PROVIDER.replace("ENDPOINT", running_browser),
                          "name: remote\nversion: 0.1.0\nprovides_browser_providers: "
                          "[remote-chromium]\n")
    runtime, environ = runtime_of(tmp_path, webpages, "plugins.enabled=[remote]",
                                  "browser.backend=plugin:remote-chromium")
    try:
        opened = call(runtime, environ, tmp_path, "browser_navigate", session="p1",
                      url=webpages.url("/form"))
        assert opened.get("status") == 200, opened
        refused = call(runtime, environ, tmp_path, "browser_navigate", session="p1",
                       url="http://169.254.169.254/")
        assert "169.254.169.254" in refused["error"]
        runtime.container.hooks().emit("on_session_end", session_id="p1")
        log = [json.loads(line) for line in (plugin / "sessions.log").read_text().splitlines()]
        assert log == [{"create": "p1"}, {"close": "bb-p1"}]
    finally:
        runtime.close()


def test_an_unknown_backend_hides_the_tools_saying_why(tmp_path: Path,
                                                       webpages: WebPages) -> None:  # noqa: F811
    runtime, _ = runtime_of(tmp_path, webpages, "browser.backend=plugin:nowhere")
    try:
        assert "browser_navigate" not in runtime.container.tools().names()
        assert "no plugin registered the browser provider 'plugin:nowhere'" in \
            runtime.container.browser().unavailable()
    finally:
        runtime.close()


def test_persist_keeps_cookies_in_the_home_privately(
        chromium: str, tmp_path: Path, webpages: WebPages) -> None:  # noqa: F811
    from http.server import ThreadingHTTPServer
    from threading import Thread

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}"
    environ = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    runtime = make_runtime(tmp_path / ".hermes", environ, "http://127.0.0.1:9/v1",
                           "toolsets.enabled=[browser]", "browser.persist=true",
                           f'web.allow_private=["{site.removeprefix("http://")}"]').start()
    try:
        call(runtime, environ, tmp_path, "browser_navigate", session="a",
             url=f"{site}/set-cookie=kept")
        runtime.container.hooks().emit("on_session_end", session_id="a")
        state = tmp_path / ".hermes" / "browser" / "state.json"
        assert "kept" in state.read_text()
        assert stat.S_IMODE(state.stat().st_mode) == 0o600
        assert stat.S_IMODE(state.parent.stat().st_mode) == 0o700
        call(runtime, environ, tmp_path, "browser_navigate", session="b",
             url=f"{site}/show-cookie")
        shown = call(runtime, environ, tmp_path, "browser_snapshot", session="b")["content"]
        assert "cookie: [flavour=kept]" in shown
    finally:
        runtime.close()
        server.shutdown()
        server.server_close()


def test_no_chromium_hides_the_tools_saying_how_to_add_one(tmp_path: Path,
                                                            webpages: WebPages) -> None:  # noqa: F811
    runtime, _ = runtime_of(tmp_path, webpages, "browser.executable=/nowhere/chromium")
    try:
        assert not [n for n in runtime.container.tools().names() if n.startswith("browser_")]
        assert runtime.container.browser().unavailable() == (
            "no browser found (/nowhere/chromium): install chromium (apt-get install "
            "chromium) or set browser.executable")
    finally:
        runtime.close()


def test_the_browser_found_is_kept_while_it_is_there_and_looked_for_again_when_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The browser tools ask before every model call whether a browser exists: the one
    found is kept (no PATH search each time), and one removed or a changed PATH is seen."""
    from hermes.browser.service import BrowserService
    from hermes.config.browser_schema import BrowserConfig
    from hermes.home import home_from_path

    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "chromium").write_text("#!/bin/sh\n")
        (folder / "chromium").chmod(0o755)
    monkeypatch.setenv("PATH", str(first))
    service = BrowserService(home_from_path(tmp_path / ".hermes"), BrowserConfig())
    assert service.unavailable() is None
    (first / "chromium").rename(first / "old-chromium")  # found where it was? not any more
    assert service.unavailable() is not None
    (first / "old-chromium").rename(first / "chromium")
    monkeypatch.setenv("PATH", str(second))  # another PATH: looked for again, at once
    (first / "chromium").unlink()
    assert service.unavailable() is None  # only second/chromium exists now
