"""The gateway as a process: one per home, status and stop, graceful shutdown with turns in
flight, several profiles in one process that never see each other's data."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import KEY, configure, free_port, gateway, tool_then_answer


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=tool_then_answer("fine"), strict=False) as fake:
        yield fake


def hermes(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=environ, text=True,
                          capture_output=True, timeout=120)


def ask(port: int, text: str, model: str = "default", **headers: str) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60,
                      headers={"Authorization": f"Bearer {KEY}", **headers},
                      json={"model": model, "messages": [{"role": "user", "content": text}]})


def messages(home: Path, session_id: str) -> list[tuple[str, str | None]]:
    with sqlite3.connect(home / "state.db") as db:
        return list(db.execute("SELECT role, content FROM messages WHERE session_id = ? "
                               "ORDER BY id", [session_id]))


def test_one_gateway_per_home(root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url)
    with gateway(environ, root) as first:
        second = hermes(environ, "gateway", "run")
        assert second.returncode == 2, second.stderr
        assert f"pid {first.proc.pid}" in second.stderr and "gateway stop" in second.stderr
        assert second.stderr.count("\n") == 1 and "serving" not in second.stderr
        assert first.proc.poll() is None


def test_serving_is_said_once_the_api_listens(root: Path, environ: dict[str, str],
                                               llm: FakeLLM) -> None:
    port = free_port()
    configure(root, llm.openai_base_url, port)
    with gateway(environ, root, ready=False) as gw:
        said = wait_until(lambda: [line for line in gw.output().splitlines()
                                   if "serving" in line], timeout=120, what="serving")
        health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)  # no retry
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert said == [f"hermes gateway: serving default (pid {gw.proc.pid}) at "
                        f"http://127.0.0.1:{port}/v1; Ctrl-C stops"]


def test_a_port_in_use_fails_before_serving(root: Path, environ: dict[str, str],
                                            llm: FakeLLM) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        configure(root, llm.openai_base_url, port)
        refused = hermes(environ, "gateway", "run")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in refused.stderr
    assert "platforms.enabled.api_server.settings.port" in refused.stderr
    assert "serving" not in refused.stderr and not (root / "gateway.pid").exists()


def test_status_and_stop(root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url)
    assert hermes(environ, "gateway", "status").returncode == 1
    with gateway(environ, root) as gw:
        shown = hermes(environ, "gateway", "status")
        assert shown.returncode == 0
        assert f"pid {gw.proc.pid}" in shown.stdout and "api_server: running" in shown.stdout
        assert f"127.0.0.1:{gw.port}" in shown.stdout
        stopped = hermes(environ, "gateway", "stop")
        assert stopped.returncode == 0 and "stopped" in stopped.stdout
        assert gw.proc.wait(30) == 0
    after = hermes(environ, "gateway", "status")
    assert after.returncode == 1 and "not running" in after.stdout
    assert not (root / "gateway.pid").exists()


def wait_for_state(home: Path, state: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if json.loads((home / "gateway.json").read_text())["state"] == state:
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    raise AssertionError(f"the gateway never reached {state!r}")


def slow_fake(release: threading.Event) -> FakeLLM:
    def respond(request: RecordedRequest) -> Reply:
        release.wait(60)
        return Reply(text="finished after all")

    return FakeLLM(fallback=respond, strict=False)


def test_sigterm_lets_a_running_turn_finish(root: Path, environ: dict[str, str]) -> None:
    release = threading.Event()
    with slow_fake(release) as llm:
        configure(root, llm.openai_base_url)
        with gateway(environ, root) as gw, ThreadPoolExecutor(1) as pool:
            answer = pool.submit(ask, gw.port, "take your time")
            llm.wait_for_requests(1, timeout=30)
            gw.proc.send_signal(signal.SIGTERM)
            refused: list[httpx.Response] = []
            with contextlib.suppress(httpx.HTTPError):  # refused, or the port is closed
                refused.append(ask(gw.port, "late"))
            assert all(r.status_code == 503 for r in refused)
            release.set()
            response = answer.result(60)
            assert response.status_code == 200
            assert response.json()["choices"][0]["message"]["content"] == "finished after all"
            assert gw.proc.wait(30) == 0
    session = response.headers["x-hermes-session-id"]
    assert messages(root, session) == [("user", "take your time"),
                                       ("assistant", "finished after all")]


def test_past_the_grace_period_turns_are_interrupted(root: Path,
                                                     environ: dict[str, str]) -> None:
    release = threading.Event()
    with slow_fake(release) as llm:
        configure(root, llm.openai_base_url, gateway__shutdown_grace=0.5)
        with gateway(environ, root) as gw, ThreadPoolExecutor(1) as pool:
            answer = pool.submit(ask, gw.port, "never mind")
            llm.wait_for_requests(1, timeout=30)
            gw.proc.send_signal(signal.SIGTERM)
            response = answer.result(30)  # answered without the model ever replying
            assert response.status_code == 503
            assert "interrupted" in response.json()["error"]["message"]
            assert gw.proc.wait(30) == 0
            release.set()
    session = response.headers.get("x-hermes-session-id")
    stored = messages(root, session) if session else []
    with sqlite3.connect(root / "state.db") as db:
        sessions = [row[0] for row in db.execute("SELECT id FROM sessions")]
    assert len(sessions) == 1
    assert messages(root, sessions[0])[0] == ("user", "never mind")
    assert stored in ([], messages(root, sessions[0]))


def test_a_second_signal_stops_at_once(root: Path, environ: dict[str, str]) -> None:
    release = threading.Event()
    with slow_fake(release) as llm:
        configure(root, llm.openai_base_url, gateway__shutdown_grace=300)
        with gateway(environ, root) as gw, ThreadPoolExecutor(1) as pool:
            pool.submit(ask, gw.port, "slow")
            llm.wait_for_requests(1, timeout=30)
            gw.proc.send_signal(signal.SIGTERM)
            wait_for_state(root, "stopping")  # signals sent together would merge into one
            gw.proc.send_signal(signal.SIGTERM)
            assert gw.proc.wait(30) == 0
            release.set()


def test_profiles_in_one_process_share_nothing(root: Path, environ: dict[str, str],
                                               llm: FakeLLM) -> None:
    for name, fact in (("alpha", "alpha-likes-okapis"), ("beta", "beta-likes-herons")):
        home = root / "profiles" / name
        configure(home, llm.openai_base_url)
        (home / "memories").mkdir(parents=True)
        (home / "memories" / "MEMORY.md").write_text(fact + "\n")
    with gateway(environ, root / "profiles" / "alpha", ["--profiles", "alpha,beta"]) as gw:
        models = httpx.get(f"{gw.url}/v1/models", headers={"Authorization": f"Bearer {KEY}"},
                           timeout=10).json()
        assert sorted(m["id"] for m in models["data"]) == ["alpha", "beta"]
        first = ask(gw.port, "remember: the password is swordfish", "alpha",
                    **{"X-Hermes-Session-Id": "shared-id"})
        assert first.status_code == 200
        alpha_request = llm.requests[-1].body
        second = ask(gw.port, "what is the password?", "beta",
                     **{"X-Hermes-Session-Id": "shared-id"})
        assert second.status_code == 200
        beta_request = llm.requests[-1].body
    assert "alpha-likes-okapis" in json.dumps(alpha_request)
    assert "beta-likes-herons" in json.dumps(beta_request)
    assert "swordfish" not in json.dumps(beta_request)
    assert "alpha-likes-okapis" not in json.dumps(beta_request)
    assert [r for r, _ in messages(root / "profiles" / "beta", "shared-id")][:1] == ["user"]
    assert "swordfish" not in str(messages(root / "profiles" / "beta", "shared-id"))


def test_a_failing_platform_is_reported_and_others_serve(root: Path, environ: dict[str, str],
                                                         llm: FakeLLM) -> None:
    configure(root / "profiles" / "open", llm.openai_base_url, host="0.0.0.0", key="short-key")
    configure(root / "profiles" / "fine", llm.openai_base_url)
    with gateway(environ, root / "profiles" / "fine", ["--profiles", "open,fine"]) as gw:
        assert ask(gw.port, "hi", "fine").status_code == 200
        assert ask(gw.port, "hi", "open").status_code == 404
        status = json.loads((root / "profiles" / "open" / "gateway.json").read_text())
        failure = status["platforms"]["api_server"]
        assert failure["state"] == "failed" and "API_SERVER_KEY" in failure["detail"]


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
@pytest.mark.parametrize(("key", "fragment"), [
    ("short-key", "too short"), ("changeme-changeme-changeme", "placeholder")])
def test_a_real_key_is_required_on_any_address(root: Path, environ: dict[str, str],
                                               llm: FakeLLM, key: str, fragment: str,
                                               host: str) -> None:
    configure(root, llm.openai_base_url, host=host, key=key)
    refused = hermes(environ, "gateway", "run")
    assert refused.returncode == 2, refused.stderr
    assert fragment in refused.stderr and "Traceback" not in refused.stderr
    assert key not in refused.stderr


def test_the_log_is_private_and_redacted(root: Path, environ: dict[str, str],
                                         llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url)
    with gateway(environ, root) as gw:
        client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=KEY, max_retries=0)
        client.chat.completions.create(model="default",
                                       messages=[{"role": "user", "content": "hi"}])
        hermes(environ, "gateway", "stop")
        gw.proc.wait(30)
    log = root / "logs" / "gateway.log"
    assert log.stat().st_mode & 0o777 == 0o600
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "platform started" in events and "turn" in events
    assert KEY not in log.read_text()


def test_the_gateway_serves_the_cli_too(root: Path, environ: dict[str, str],
                                        llm: FakeLLM) -> None:
    """One warm process: `hermes -z` is answered by a server forked from the gateway."""
    configure(root, llm.openai_base_url)
    cli = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    with gateway(environ, root) as gw:
        pid_file = root / "run" / "daemon.pid"
        # The server warms up after it is forked; its pid file is written in place, so it
        # may be seen empty for an instant.
        wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), timeout=60,
                   what="the CLI server's pid file")
        server = int(pid_file.read_text())
        parent = (Path(f"/proc/{server}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert int(parent) == gw.proc.pid
        answer = hermes(cli, "-z", "hello")
        assert (answer.returncode, answer.stdout) == (0, "fine\n"), answer.stderr
        assert int((root / "run" / "daemon.pid").read_text()) == server
        hermes(environ, "gateway", "stop")
        assert gw.proc.wait(30) == 0
    assert not (root / "run" / "daemon.sock").exists()
