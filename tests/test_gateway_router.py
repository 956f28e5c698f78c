"""Chat platforms through the gateway's router: one session per chat, a message that
arrives mid-turn waits its turn, slash commands from any platform."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.gateway.base import (
    MessageEvent,
    MessageHandler,
    MessageSource,
    PlatformAdapter,
    PlatformState,
)
from hermes.gateway.router import SessionRouter
from hermes.gateway.service import ProfileService
from hermes.home import resolve_home


class ChatAdapter(PlatformAdapter):
    """A chat platform in memory: what it was sent, by chat."""

    def __init__(self) -> None:
        self.name = "chat"
        self.status = PlatformState("running")
        self.sent: list[tuple[str, str]] = []
        self.got = asyncio.Event()

    async def start(self, on_message: MessageHandler) -> None:
        self.on_message = on_message

    async def stop(self) -> None:
        pass

    async def send(self, source: MessageSource, text: str) -> None:
        self.sent.append((source.chat_id, text))
        self.got.set()

    async def say(self, chat: str, text: str) -> None:
        await self.on_message(MessageEvent(MessageSource("chat", chat, user_id="u1"), text))

    async def replies(self, count: int) -> list[tuple[str, str]]:
        async with asyncio.timeout(30):
            while len(self.sent) < count:
                self.got.clear()
                await self.got.wait()
        return self.sent


@pytest.fixture
def gate() -> threading.Event:
    return threading.Event()


@pytest.fixture
def llm(gate: threading.Event) -> Iterator[FakeLLM]:
    def respond(request: RecordedRequest) -> Reply:
        text = request.last_user_text or ""
        if "slow" in text:
            gate.wait(30)
        return Reply(text=f"re: {text.splitlines()[0]}")

    with FakeLLM(fallback=respond, strict=False) as fake:
        yield fake


@pytest.fixture
def router(root: Path, environ: dict[str, str], llm: FakeLLM) -> Iterator[SessionRouter]:
    write_fake_provider(root, llm.openai_base_url)
    home = resolve_home(None, environ)
    home.ensure()
    with build_runtime(home, compose_config(home, environ).config, environ) as runtime:
        service = ProfileService(home, runtime, logging.getLogger("test-gateway"))
        yield SessionRouter(service)


async def connect(router: SessionRouter) -> ChatAdapter:
    adapter = ChatAdapter()
    await adapter.start(router.handle)
    router.adapters["chat"] = adapter
    return adapter


def test_a_message_mid_turn_waits_and_shares_the_session(router: SessionRouter, llm: FakeLLM,
                                                         gate: threading.Event) -> None:
    async def scenario() -> list[tuple[str, str]]:
        chat = await connect(router)
        await chat.say("c1", "slow first")
        await asyncio.to_thread(llm.wait_for_requests, 1, 30)
        await chat.say("c1", "second")  # arrives while the first turn runs
        assert llm.pending == 0 and len(llm.requests) == 1
        gate.set()
        replies = await chat.replies(2)
        await router.drain()
        return replies

    assert asyncio.run(scenario()) == [("c1", "re: slow first"), ("c1", "re: second")]
    second = json.dumps(llm.requests[-1].body["messages"])
    assert "slow first" in second  # same session: the first exchange is its history
    assert router.session_count == 1


def test_chats_have_their_own_sessions(router: SessionRouter, llm: FakeLLM,
                                       gate: threading.Event) -> None:
    async def scenario() -> None:
        chat = await connect(router)
        await chat.say("c1", "I am in chat one")
        await chat.replies(1)
        await chat.say("c2", "who else is here?")
        await chat.replies(2)

    asyncio.run(scenario())
    assert "chat one" not in json.dumps(llm.requests[-1].body["messages"])
    assert router.session_count == 2


def test_slash_commands(router: SessionRouter, llm: FakeLLM, gate: threading.Event) -> None:
    async def scenario() -> list[tuple[str, str]]:
        chat = await connect(router)
        await chat.say("c1", "/help")
        await chat.say("c1", "/usage")
        await chat.say("c1", "/model")
        await chat.say("c1", "hello")
        await chat.replies(4)
        await chat.say("c1", "/usage")
        await chat.say("c1", "/stop")
        await chat.say("c1", "slow one")
        await asyncio.to_thread(llm.wait_for_requests, 2, 30)
        await chat.say("c1", "/stop")
        await chat.replies(8)
        gate.set()  # the abandoned model call may finish now
        await router.drain()
        await chat.say("c1", "/new")
        await chat.say("c1", "fresh")
        await chat.replies(10)
        await chat.say("c1", "/bogus")
        return await chat.replies(11)

    replies = [text for _, text in asyncio.run(scenario())]
    assert "/stop" in replies[0] and replies[1] == "no conversation yet"
    assert replies[2] == "model: gpt-4o" and replies[3] == "re: hello"
    assert replies[4].startswith("tokens: ") and replies[5] == "nothing is running"
    assert replies[6] == "stopping the running turn" and replies[7] == "(interrupted)"
    assert replies[8] == "started a new conversation" and replies[9] == "re: fresh"
    assert "unknown command /bogus" in replies[10]
    assert "hello" not in json.dumps(llm.requests[-1].body["messages"])


def test_slash_model_refuses_what_is_no_model_name(router: SessionRouter,
                                                  llm: FakeLLM) -> None:
    async def scenario() -> list[tuple[str, str]]:
        chat = await connect(router)
        await chat.say("c1", "/model " + "x" * 201)  # any allowed user may send this
        await chat.say("c1", "/model gpt-4o\u202eevil")
        await chat.say("c1", "hello")
        return await chat.replies(3)

    replies = [text for _, text in asyncio.run(scenario())]
    assert replies[:2] == ["not a model name: letters, digits and . : / @ + - _ only, "
                           "200 at most"] * 2
    assert [r.model for r in llm.requests] == ["gpt-4o"]


def test_slash_model_switches_the_chats_session_until_new(router: SessionRouter,
                                                         llm: FakeLLM) -> None:
    async def scenario() -> list[tuple[str, str]]:
        chat = await connect(router)
        await chat.say("c1", "/model early-model")  # before the chat has a session
        await chat.say("c1", "first")
        await chat.replies(2)
        await chat.say("c1", "/model other-model")
        await chat.say("c1", "second")
        await chat.replies(4)
        await chat.say("c1", "/model")
        await chat.say("c2", "elsewhere")
        await chat.replies(6)
        await chat.say("c1", "/new")
        await chat.say("c1", "fresh")
        await chat.replies(8)
        await chat.say("c1", "/model")
        return await chat.replies(9)

    replies = [text for _, text in asyncio.run(scenario())]
    assert replies[0].startswith("model for this conversation: early-model")
    assert replies[2].startswith("model for this conversation: other-model")
    assert "model: other-model" in replies[4:6] and replies[8] == "model: gpt-4o"
    assert [(r.last_user_text, r.model) for r in llm.requests] == [
        ("first", "early-model"), ("second", "other-model"), ("elsewhere", "gpt-4o"),
        ("fresh", "gpt-4o")]
