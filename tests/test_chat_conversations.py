"""Chat's side of the one conversation path (issue 26), in-process and through the warm
server: a one-shot whose model never answered leaves no session, one that was answered
is kept and resumable by a prefix of its id, and a provider without its key is refused
in one line before anything starts (no session, no model call)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import refused, write_fake_provider
from fakellm import FakeLLM, Fault, Reply
from test_door_conversations import NO_KEY, sessions, without_key

pytestmark = pytest.mark.both_modes


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


def test_a_one_shot_the_model_never_answered_leaves_no_session(hermes_subprocess,
                                                                root: Path,
                                                                llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    llm.script.push(*[Fault.server_error()] * 8)
    result = hermes_subprocess("chat", "-q", "hello")
    assert result.returncode == 1 and "error:" in result.stderr, result.stderr
    assert "session " not in result.stderr  # nothing to resume is offered
    assert sessions(root / "state.db") == []


def test_an_answered_one_shot_is_kept_and_resumed_by_prefix(hermes_subprocess, root: Path,
                                                            llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    llm.script.push(Reply(text="Hi there."), Reply(text="Again."))
    first = hermes_subprocess("chat", "-q", "hello")
    assert first.returncode == 0 and first.stdout == "Hi there.\n", first.stderr
    [(session_id, source)] = sessions(root / "state.db")
    second = hermes_subprocess("chat", "-q", "more", "--resume", session_id[:8])
    assert second.returncode == 0 and second.stdout == "Again.\n", second.stderr
    assert [sid for sid, _ in sessions(root / "state.db")] == [session_id]
    texts = [m.get("content") for m in llm.requests[-1].body["messages"]]
    assert "hello" in texts and "Hi there." in texts  # the same transcript


def test_a_missing_key_is_refused_before_anything_starts(hermes_subprocess, hermes,
                                                         root: Path, llm: FakeLLM) -> None:
    write_fake_provider(root, llm.openai_base_url)
    without_key(root)
    result = hermes_subprocess("chat", "-q", "hello")
    assert result.returncode == 2, result.stderr
    assert NO_KEY in result.stderr and "CUSTOM_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    assert sessions(root / "state.db") == [] and llm.requests == []
    refused(hermes("chat", "-q", "hello"), NO_KEY)
    assert sessions(root / "state.db") == [] and llm.requests == []
