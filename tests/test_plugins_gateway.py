"""Plugins in a real `hermes gateway run` process serving two profiles with different
plugins: each profile's model sees only its own plugins' tools; the sample plugin's chat
platform (plugin:sink-chat) carries its slash command, /new and /help; its
pre_gateway_dispatch hook drops and rewrites messages; gateway start and stop events."""

from __future__ import annotations

import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import KEY, configure, gateway
from hermes.unix_socket import address
from plugin_support import SINK_ENV, install_sample, kinds

CALLS = {"sink_echo": {"words": "from work"}, "calculate": {"expression": "6*7"}}


def one_call_then_answer(request: RecordedRequest) -> Reply:
    """Call whichever sample tool the profile offers, then answer with what came back."""
    if request.tool_results:
        return Reply(text=f"tool said {request.tool_results[-1].content}")
    offered = [name for name in CALLS if name in request.tool_names]
    return Reply(tool_calls=[ToolCall(offered[0], CALLS[offered[0]])]) if offered else \
        Reply(text="no plugin tool here")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=one_call_then_answer, strict=False) as fake:
        yield fake


def ask(port: int, text: str, model: str) -> str:
    reply = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60,
                       headers={"Authorization": f"Bearer {KEY}"},
                       json={"model": model, "messages": [{"role": "user", "content": text}]})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["choices"][0]["message"]["content"])


def chat(home: Path, text: str, chat_id: str = "c1", user: str = "u1") -> None:
    """One message in through the sink plugin's chat platform."""
    with socket.socket(socket.AF_UNIX) as sock:
        with address(home / "sink-inbox.sock") as where:
            sock.connect(where)
        sock.sendall(json.dumps({"chat": chat_id, "user": user, "text": text}).encode() + b"\n")


def outbox(home: Path) -> list[str]:
    path = home / "sink-outbox.jsonl"
    return [json.loads(line)["text"] for line in path.read_text().splitlines()] \
        if path.exists() else []


def test_two_profiles_with_different_plugins_in_one_gateway(root: Path, environ, llm) -> None:
    work, play = root / "profiles" / "work", root / "profiles" / "play"
    configure(work, llm.openai_base_url, plugins__enabled=["sink"],
              platforms__enabled__sinkchat={"kind": "plugin:sink-chat", "allowed_users": ["u1"],
                                            "settings": {"greeting": "hello from work"}})
    configure(play, llm.openai_base_url, plugins__enabled=["calculator"])
    install_sample(work, "sink")
    install_sample(play, "calculator")
    install_sample(play, "sink")  # present, not enabled: nothing of it loads there
    with (work / ".env").open("a") as env:
        env.write("".join(f"{k}={v}\n" for k, v in SINK_ENV.items()))
    with gateway(environ, work, ["--profiles", "work,play"]) as gw:
        assert ask(gw.port, "echo", "work") == 'tool said {"echo": "FROM WORK", "task": ' \
            f'"{json.loads(llm.requests[-1].tool_results[-1].content)["task"]}"}}'
        assert "calculate" not in llm.requests[-1].tool_names
        assert ask(gw.port, "6 times 7?", "play") == \
            'tool said {"expression": "6*7", "result": 42}'
        assert "sink_echo" not in llm.requests[-1].tool_names
        status = json.loads((work / "gateway.json").read_text())["platforms"]["sinkchat"]
        assert status["state"] == "running" and status["detail"].endswith("hello from work")

        chat(work, "/sink via chat")
        wait_until(lambda: outbox(work), what="the /sink answer")
        assert json.loads(outbox(work)[0])["echo"] == "VIA CHAT"
        chat(work, "drop me")  # skipped by the hook: no answer, no turn
        chat(work, "shout rewritten")  # becomes /sink rewritten
        wait_until(lambda: len(outbox(work)) == 2, what="the rewritten message's answer")
        assert json.loads(outbox(work)[1])["echo"] == "REWRITTEN"
        chat(work, "hello there")  # a turn, so /new has a session to end
        wait_until(lambda: len(outbox(work)) == 3, what="the turn's answer")
        chat(work, "/new")
        wait_until(lambda: "on_session_reset" in kinds(work), what="the reset event")
        chat(work, "/help")
        wait_until(lambda: len(outbox(work)) == 5, what="/help")
        assert outbox(work)[3] == "started a new conversation"
        assert "/sink — Echo through the sink_echo tool" in outbox(work)[4]
        gw.proc.send_signal(signal.SIGTERM)
        assert gw.proc.wait(60) == 0, gw.output()
    assert all("drop me" not in (r.last_user_text or "") for r in llm.requests)
    seen = kinds(work)
    assert seen[1] == "on_gateway_start" and seen[-1] == "on_gateway_stop"
    assert kinds(play) == []  # the sink plugin never loaded in the other profile
    start = next(e for e in map(json.loads, (work / "sink-events.jsonl").read_text()
                                .splitlines()) if e["event"] == "on_gateway_start")
    assert start["profile"] == "work" and sorted(start["platforms"]) == ["api_server",
                                                                         "sinkchat"]
