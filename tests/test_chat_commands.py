"""The interactive chat's slash commands on a real runtime, litellm against the fake LLM:
/undo and /retry edit the session in place."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply
from hermes.agent.conversations import Conversation, Conversations
from hermes.agent.factory import Interaction
from hermes.agent.loop import GRACE_NOTE, Agent
from hermes.agent.summary import summary_text
from hermes.agent.transcript import last_turn_start
from hermes.cli.chat_commands import run_command
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_from_path
from hermes.sessions import SessionStore

HOW = Interaction()


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def runtime(root: Path, environ, llm: FakeLLM) -> Iterator[object]:
    write_fake_provider(root, llm.openai_base_url)
    home = home_from_path(root)
    rt = build_runtime(home, compose_config(home, environ, []).config, environ)
    with rt:
        yield rt


def parts(runtime) -> tuple[Conversations, SessionStore, Agent]:
    conversations: Conversations = runtime.container.conversations()
    return conversations, runtime.container.sessions(), conversations.open(HOW).agent


def command(text: str, agent: Agent, conversations: Conversations, capsys
            ) -> tuple[Agent, str | None, str]:
    conversation, resend = run_command(text, Conversation(conversations, agent),
                                       conversations, HOW)
    return conversation.agent, resend, capsys.readouterr().out


def test_undo_edits_the_session_in_place_and_keeps_the_usage(runtime, llm: FakeLLM,
                                                            capsys) -> None:
    conversations, store, agent = parts(runtime)
    llm.push(Reply(text="one"), Reply(text="two"))
    agent.run_turn("first")
    agent.run_turn("second")
    session_id = agent.session_id
    agent, resend, out = command("/undo", agent, conversations, capsys)
    assert resend is None and "undone the last exchange" in out
    assert agent.session_id == session_id
    assert [m["content"] for m in store.messages(session_id)] == ["first", "one"]
    assert [m["content"] for m in agent.messages[1:]] == ["first", "one"]
    assert [s.id for s in store.list_sessions()] == [session_id]  # no fork
    assert "tokens: 20 in, 10 out" in command("/usage", agent, conversations, capsys)[2]
    llm.push(Reply(text="three"))
    agent.run_turn("third")
    assert [m["content"] for m in llm.requests[-1].body["messages"][1:]] == [
        "first", "one", "third"]


def test_retry_sends_the_typed_words_again_in_the_same_session(runtime, llm: FakeLLM,
                                                              capsys) -> None:
    runtime.container.hooks().subscribe(
        "pre_llm_call", lambda user_message, **_: "[recalled: likes tea]", "test")
    conversations, store, agent = parts(runtime)
    llm.push(Reply(text="meh"), Reply(text="better"))
    agent.run_turn("a question")
    agent, resend, out = command("/retry", agent, conversations, capsys)
    assert resend == "a question" and "retrying: a question" in out
    assert store.messages(agent.session_id) == []
    agent.run_turn(resend)
    sent = llm.requests[-1].body["messages"]
    assert [m["content"] for m in sent[1:]] == ["a question\n\n[recalled: likes tea]"]
    assert [m["content"] for m in store.messages(agent.session_id)] == [
        "a question\n\n[recalled: likes tea]", "better"]
    assert "tokens: 20 in, 10 out" in command("/usage", agent, conversations, capsys)[2]
    assert len(store.list_sessions()) == 1


def test_nothing_to_undo_or_retry_is_said_plainly(runtime, llm: FakeLLM, capsys) -> None:
    conversations, store, agent = parts(runtime)
    agent, resend, out = command("/retry", agent, conversations, capsys)
    assert resend is None and out == "nothing to retry: send a message first\n"
    agent, resend, out = command("/undo", agent, conversations, capsys)
    assert resend is None and out == "nothing to undo: this session has no exchange yet\n"
    assert llm.requests == [] and len(store.list_sessions()) == 1


def test_a_turn_starts_at_a_typed_message_not_a_grace_note_or_summary() -> None:
    summary = {"role": "user", "content": summary_text("## Goal\nship it")}
    messages = [{"role": "system", "content": "s"}, summary,
                {"role": "user", "content": "go"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": GRACE_NOTE}, {"role": "assistant", "content": "x"}]
    assert last_turn_start(messages) == 2
    assert last_turn_start(messages[:2]) is None
