"""``dashboard.enabled``: ``hermes gateway run`` serves the dashboard too, on its own
listener in the same process, started and stopped with the platforms; its URL (with the
token) said once at start, ``hermes gateway status`` and gateway.json show it (without)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import wait_until
from fakellm import FakeLLM
from gateway_support import configure, gateway

URL = re.compile(r"^    http://(\w{20,}\.localhost:(\d+))(/p/default/profiles\?token=(\S+))$",
                 re.M)
"""The printed URL: on the token's secret ``<label>.localhost`` (tests/dashboard_support)."""


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


def hermes(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=environ, text=True,
                          capture_output=True, timeout=60)


def status_of(root: Path) -> dict[str, object]:
    return dict(json.loads((root / "gateway.json").read_text()))


def test_the_gateway_serves_the_dashboard_and_stops_it_with_itself(
        root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url, dashboard__enabled=True, dashboard__port=0)
    with gateway(environ, root) as gw:
        found = URL.search(gw.output())
        assert found, gw.output()
        host, port, login, token = found[1], int(found[2]), found[3], found[4]
        assert port != gw.port  # its own listener
        assert token == (root / "dashboard" / "token").read_text().strip()
        assert gw.output().count(token) == 1  # said once
        with httpx.Client(timeout=10, headers={"Host": host}) as browser:
            assert browser.get(f"http://127.0.0.1:{port}/p/default/profiles").status_code == 401
            page = browser.get(f"http://127.0.0.1:{port}{login}", follow_redirects=True)
            assert page.status_code == 200 and "gpt-4o" in page.text
            assert "token=" not in str(page.url)
        assert status_of(root)["dashboard"] == {
            "state": "running", "detail": f"http://127.0.0.1:{port}/", "retry_at": None,
            "extra": {}}
        shown = hermes(environ, "gateway", "status")
        assert f"  dashboard: running http://127.0.0.1:{port}/\n" in shown.stdout
        assert token not in shown.stdout + (root / "gateway.json").read_text()
        assert not any(token in log.read_text(errors="replace")
                       for log in (root / "logs").rglob("*") if log.is_file())
        gw.proc.send_signal(signal.SIGTERM)
        assert gw.proc.wait(30) == 0, gw.output()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # the listener is closed with the gateway


def test_without_dashboard_enabled_there_is_none(
        root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url)
    with gateway(environ, root) as gw:
        assert "dashboard" not in gw.output() and "dashboard" not in status_of(root)
        assert "dashboard" not in hermes(environ, "gateway", "status").stdout


def test_a_dashboard_that_cannot_listen_is_reported_and_the_platforms_serve(
        root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        configure(root, llm.openai_base_url, dashboard__enabled=True, dashboard__port=busy)
        with gateway(environ, root) as gw:
            wait_until(lambda: "dashboard" in status_of(root))
            lines = [line for line in gw.output().splitlines() if "dashboard" in line]
            assert lines == [f"hermes gateway: dashboard failed: cannot listen on "
                             f"127.0.0.1:{busy}: Address already in use — stop what uses it "
                             "or pick another port: `hermes dashboard --port PORT` (or "
                             "`hermes config set dashboard.port PORT`)"], gw.output()
            assert status_of(root)["dashboard"]["state"] == "failed"  # type: ignore[index]
            assert httpx.get(f"{gw.url}/health", timeout=5).status_code == 200


def test_sigterm_stops_hermes_dashboard_as_ctrl_c_does(environ: dict[str, str],
                                                       tmp_path: Path) -> None:
    """``docker stop`` and ``systemctl stop`` send SIGTERM: it stops gracefully, exit 0."""
    out = tmp_path / "out"
    with out.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "hermes", "dashboard", "--port", "0",
                                 "--no-open"], env=environ, stdout=sink,
                                stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: "token=" in out.read_text(), 60, "the URL")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, out.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.read_text().endswith("hermes dashboard: stopped\n")
