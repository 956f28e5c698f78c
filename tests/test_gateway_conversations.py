"""The gateway's front doors over the one conversation service (issue 26), through a real
`hermes gateway run` against the fake LLM and the fake Bot API: a running turn — a chat's or
an API request's — is counted once in ``gateway.json`` and interrupted once by the shutdown
grace; a session the model never answered is discarded; a profile whose provider lacks
its key is refused before anything starts."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import ok, wait_until
from fakebot import FakeBotAPI, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import KEY, Gateway, free_port, gateway
from messaging_support import configure_messaging, platform_detail

TOKEN = "123456789:AAH-test-token-0123456789abcdefghij"
ADA = 42


@pytest.fixture
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def serve_both(home: Path, llm_url: str, bot: FakeBotAPI, **top: Any) -> None:
    """A profile with a Telegram chat (Ada allowed) and the API server (any free port)."""
    telegram = {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
                "allowed_users": [str(ADA)],
                "settings": {"base_url": bot.url, "poll_timeout": 2, "send_rate": 50}}
    api = {"kind": "api_server", "token": "${secret:API_SERVER_KEY}",
           "settings": {"host": "127.0.0.1", "port": 0}}
    configure_messaging(home, llm_url, {"telegram": telegram, "api_server": api},
                        {"TELEGRAM_BOT_TOKEN": TOKEN, "API_SERVER_KEY": KEY}, **top)


def ask(port: int, text: str, session: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {KEY}"} | (
        {"x-hermes-session-id": session} if session else {})
    return httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", headers=headers,
                      json={"model": "default", "messages": [{"role": "user", "content": text}]},
                      timeout=60)


def status_after(home: Path, moment: float) -> dict[str, Any]:
    """``gateway.json`` once it was written after ``moment`` (it is rewritten every 2 s)."""
    def fresh() -> dict[str, Any] | None:
        try:
            info = json.loads((home / "gateway.json").read_text())
        except (OSError, ValueError):
            return None
        return info if float(info.get("updated_at", 0)) > moment else None
    return wait_until(fresh, timeout=20, what="gateway.json rewritten")  # type: ignore[return-value]


def turns_once_started(gw: Gateway, llm: FakeLLM, requests: int) -> int:
    """``active_turns`` in ``gateway.json`` once the turn's model call is under way."""
    llm.wait_for_requests(requests, timeout=30)
    return int(status_after(gw.home, time.time())["active_turns"])


def held(hold: threading.Event) -> Any:
    """A fake-LLM responder: a message with "slow" waits for ``hold``; every one is answered."""
    def respond(request: RecordedRequest) -> Reply:
        text = request.last_user_text or ""
        if "slow" in text:
            hold.wait(30)
        return Reply(text=f"re: {text}")
    return respond


def test_a_running_turn_is_counted_once_and_interrupted_once(
        root: Path, environ: dict[str, str], bot: FakeBotAPI, hermes_subprocess: Any) -> None:
    hold = threading.Event()
    with FakeLLM(fallback=held(hold), strict=False) as llm, ThreadPoolExecutor(1) as pool:
        serve_both(root, llm.openai_base_url, bot, gateway={"shutdown_grace": 0.5})
        with gateway(environ, root) as gw:
            platform_detail(gw, "telegram")
            bot.push("slow chat", user_id=ADA)
            assert turns_once_started(gw, llm, 1) == 1  # the chat's turn (was 2)
            running = hermes_subprocess("gateway", "status").stdout
            assert "1 turn(s) running" in running, running
            hold.set()
            wait_until(lambda: "re: slow chat" in bot.texts(ADA), what="the chat's answer")
            hold.clear()
            answer: Future[httpx.Response] = pool.submit(ask, gw.port, "slow api")
            assert turns_once_started(gw, llm, 2) == 1  # the API request's turn
            hold.set()
            assert answer.result(30).status_code == 200
            assert status_after(gw.home, time.time())["active_turns"] == 0
            hold.clear()
            bot.push("slow again", user_id=ADA)
            llm.wait_for_requests(3, timeout=30)
            gw.proc.send_signal(signal.SIGTERM)
            assert gw.proc.wait(30) == 0
            hold.set()
    events = [json.loads(line) for line in (root / "logs" / "gateway.log").read_text()
              .splitlines()]
    [grace] = [e for e in events if e["event"] == "grace period over: turns interrupted"]
    assert grace["turns"] == 1  # was 2: the router's count and the service's


def test_a_session_the_model_never_answered_is_discarded(
        root: Path, environ: dict[str, str], bot: FakeBotAPI, hermes: Any) -> None:
    with socket.socket() as closed:  # a port nobody listens on: the endpoint is unreachable
        closed.bind(("127.0.0.1", 0))
        unreachable = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    serve_both(root, unreachable, bot)
    with gateway(environ, root) as gw:
        platform_detail(gw, "telegram")
        failed = ask(gw.port, "anyone there?", session="client-chosen-id")
        assert failed.status_code == 502, failed.text
        streamed = httpx.post(f"http://127.0.0.1:{gw.port}/v1/chat/completions",
                              headers={"authorization": f"Bearer {KEY}",
                                       "x-hermes-session-id": "streamed-id"},
                              json={"model": "default", "stream": True,
                                    "messages": [{"role": "user", "content": "still?"}]},
                              timeout=60)
        assert "upstream_error" in streamed.text, streamed.text
        before = len(bot.texts(ADA))
        bot.push("hello?", user_id=ADA)
        [said] = wait_until(lambda: bot.texts(ADA)[before:], timeout=60, what="the error reply")
        assert "error" in said
    assert "no sessions yet" in ok(hermes("sessions", "list"))
    with sqlite3.connect(root / "state.db") as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    chats = json.loads((root / "gateway_sessions.json").read_text())
    assert chats == {}  # the chat's next message starts afresh, not in a deleted session


def test_a_session_the_model_answered_is_kept(root: Path, environ: dict[str, str],
                                              bot: FakeBotAPI, hermes: Any) -> None:
    with FakeLLM(fallback=held(threading.Event()), strict=False) as llm:
        serve_both(root, llm.openai_base_url, bot)
        with gateway(environ, root) as gw:
            platform_detail(gw, "telegram")
            assert ask(gw.port, "hi", session="kept-id").status_code == 200
            bot.push("hello", user_id=ADA)
            wait_until(lambda: "re: hello" in bot.texts(ADA), what="the chat's answer")
    listed = ok(hermes("sessions", "list"))
    assert "kept-id" in listed
    with sqlite3.connect(root / "state.db") as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (2,)


def test_a_profile_without_its_provider_key_is_refused_before_anything_starts(
        root: Path, environ: dict[str, str], bot: FakeBotAPI, hermes: Any) -> None:
    port = free_port()
    serve_both(root, "http://127.0.0.1:9/v1", bot)
    config = root / "config.yaml"
    config.write_text(config.read_text().replace('port: 0', f'port: {port}'))
    env = root / ".env"
    env.write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")  # no CUSTOM_API_KEY, no API_SERVER_KEY
    env.chmod(0o600)
    with gateway(environ, root, ready=False) as gw:
        assert gw.proc.wait(60) == 2, gw.output()
    lines = gw.output().strip().splitlines()
    assert all("Traceback" not in line for line in lines), gw.output()
    error = lines[-1]
    assert error.startswith("error: ") and "profile default" in error, error
    assert "no API key for provider custom" in error and "CUSTOM_API_KEY" in error, error
    assert env.read_text() == f"TELEGRAM_BOT_TOKEN={TOKEN}\n"  # no API server key made
    assert not (root / "state.db").exists()
    assert not bot.of("getUpdates")  # no platform started
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # nothing listening
    assert "no sessions yet" in ok(hermes("sessions", "list"))



def test_a_served_profile_without_its_key_is_named(hermes: Any, hermes_subprocess: Any,
                                                   root: Path) -> None:
    for name in ("a", "b"):
        ok(hermes("profile", "create", name))
        ok(hermes("-p", name, "config", "set", "platforms", "api_server"))
    ok(hermes("-p", "a", "config", "set", "OPENAI_API_KEY", "sk-test-0123456789abcdef"))
    proc = hermes_subprocess("-p", "a", "gateway", "run", "--profiles", "a,b")
    assert proc.returncode == 2, proc.stderr
    error = proc.stderr.strip()
    assert error.startswith("error: profile b: no API key for provider openai") and \
        "\n" not in error, error
    assert "`hermes -p b config set OPENAI_API_KEY YOUR_KEY`" in error, error
    assert not (root / "profiles" / "b" / "state.db").exists()
