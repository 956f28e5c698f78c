"""The one conversation path (``agent/conversations.py``) on a real runtime, litellm
against the fake LLM: the id rules, counting a running turn once, interrupts and
deadlines, slots and draining, and discarding a session the model never answered."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, Fault, Reply
from hermes.agent.conversations import LATEST, Busy, Conversations, Draining
from hermes.agent.factory import Interaction
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.errors import UserError
from hermes.home import home_from_path

HOW = Interaction(stream=True)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def runtime(root: Path, environ: dict[str, str], llm: FakeLLM) -> Iterator[Any]:
    write_fake_provider(root, llm.openai_base_url)
    home = home_from_path(root)
    with build_runtime(home, compose_config(home, environ, []).config, environ) as rt:
        yield rt


@pytest.fixture
def conversations(runtime: Any) -> Conversations:
    return Conversations(runtime.container.agent_factory(), max_turns=1)


def stored(runtime: Any) -> list[str]:
    return [session.id for session in runtime.container.sessions().list_sessions()]


def test_ids_resume_exactly_by_prefix_or_the_latest(conversations: Conversations,
                                                    llm: FakeLLM, runtime: Any) -> None:
    llm.push(Reply("one"), Reply("two"), Reply("three"))
    with conversations.open(HOW, session="chat-42") as first:
        assert first.run("hi").text == "one"
    with conversations.open(HOW, session="chat-42") as again:  # the same session
        assert again.session_id == "chat-42" and again.run("more").text == "two"
    with conversations.open(HOW, resume="chat-4") as by_prefix:
        assert by_prefix.session_id == "chat-42"
    with conversations.open(HOW, resume=LATEST) as latest:
        assert latest.session_id == "chat-42"
    with pytest.raises(UserError, match="nope"):
        conversations.open(HOW, resume="nope")
    with conversations.open(HOW) as fresh:
        assert fresh.session_id != "chat-42" and fresh.run("new").text == "three"
    assert sorted(stored(runtime)) == sorted(["chat-42", fresh.session_id])


def test_a_session_the_model_never_answered_is_discarded(conversations: Conversations,
                                                         llm: FakeLLM, runtime: Any) -> None:
    llm.push(Fault.server_error(), Fault.server_error(), Reply("for chat-7"), Reply("kept"))
    with conversations.open(HOW) as failed:
        assert failed.run("hello").exit_reason == "error"
    assert failed.session_id not in stored(runtime)
    kept = conversations.open(HOW, session="chat-7")
    kept.run("hello")
    assert kept.end(keep=True).kept and "chat-7" in stored(runtime)  # kept when asked
    answered = conversations.open(HOW)
    assert answered.run("hello").text == "kept"
    assert answered.end().kept and answered.end().kept  # a second end changes nothing


def test_a_running_turn_is_counted_once_and_interrupted_by_the_deadline_or_a_drain(
        conversations: Conversations, llm: FakeLLM) -> None:
    released = threading.Event()
    llm.push(lambda request: released.wait(30) and Reply("late"))  # a model that hangs
    conversation = conversations.open(HOW)
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(conversation.run("wait")))
    with conversations.slot():
        worker.start()
        wait_until(lambda: conversations.running == 1 and llm.requests, 10,
                   "the turn to count and call the model")
        with pytest.raises(Busy), conversations.slot():
            pass
        conversations.drain()
        assert conversations.interrupt_all() == 1
        worker.join(10)
    released.set()
    assert results[0].exit_reason == "interrupted" and conversations.running == 0
    with pytest.raises(Draining), conversations.slot():
        pass
    hang = threading.Event()
    llm.push(lambda request: hang.wait(30) and Reply("never"))
    timed = Conversations(conversations.factory).open(HOW, session=conversation.session_id)
    started = time.monotonic()
    outcome = timed.run("again", deadline=0.5)
    assert outcome.exit_reason == "interrupted", (outcome, len(llm.requests))
    assert time.monotonic() - started < 10
    hang.set()
