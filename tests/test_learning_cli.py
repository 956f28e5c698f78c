"""The learning loop in real processes: a review still running when a CLI command ends is
waited for at most ``learning.exit_wait`` in-process (and that is said), and finished by
the warm server after the client has its answer; the gateway runs reviews after its turns
and ticks the curator; a standalone warm server ticks the curator as it starts."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, Reply
from gateway_support import KEY, gateway
from gateway_support import configure as gateway_home
from hermes.skills.store import SkillsStore
from learning_support import Model, configure, log_lines, memory_add, serving, user_notes

DAY = 86400.0


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
def llm(model: Model) -> Iterator[FakeLLM]:
    with serving(model) as fake:
        yield fake


def learn_every_turn(root: Path, llm: FakeLLM, exit_wait: float) -> None:
    write_fake_provider(root, llm.openai_base_url)
    configure(root, learning={"memory_nudge_turns": 1, "skill_nudge_iterations": 0,
                              "exit_wait": exit_wait})


def test_in_process_the_cli_waits_for_the_review_and_says_what_it_learned(
        hermes, root: Path, llm: FakeLLM, model: Model) -> None:
    learn_every_turn(root, llm, exit_wait=60)
    model.chat.append(Reply(text="Noted, Ada."))
    model.review.extend([memory_add("Goes by Ada"), Reply(text="Saved.")])
    result = hermes("-z", "call me Ada")
    assert result.exit_code == 0 and result.stdout == "Noted, Ada.\n", result.stderr
    assert "learning: waiting up to 60 s for the background review" in result.stderr
    assert "learned: memory updated" in result.stderr
    assert "Goes by Ada" in user_notes(root)


def test_in_process_the_wait_ends_after_exit_wait(hermes, root: Path, llm: FakeLLM,
                                                  model: Model) -> None:
    learn_every_turn(root, llm, exit_wait=0.5)
    model.gate.clear()  # the review's model call hangs
    model.chat.append(Reply(text="Hello."))
    result = hermes("-z", "hi")
    assert result.exit_code == 0 and result.stdout == "Hello.\n", result.stderr
    assert "learning: waiting up to 0.5 s" in result.stderr
    assert "the review was stopped before it finished; what it saved is kept" in result.stderr
    assert "learned:" not in result.stderr
    [line] = wait_until(lambda: log_lines(root), what="the stopped review's log line")
    assert line["interrupted"] is True


@pytest.mark.parametrize("cli_mode", ["daemon"], indirect=True)
def test_the_warm_server_finishes_the_review_after_the_client_is_answered(
        environ: dict[str, str], root: Path, llm: FakeLLM, model: Model) -> None:
    learn_every_turn(root, llm, exit_wait=0.5)
    model.gate.clear()
    model.chat.append(Reply(text="Hello, Ada."))
    model.review.extend([memory_add("Goes by Ada"), Reply(text="Saved.")])
    result = subprocess.run([sys.executable, "-m", "hermes", "-z", "call me Ada"], env=environ,
                            text=True, capture_output=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, "Hello, Ada.\n"), result.stderr
    assert "learning:" not in result.stderr  # the client was never kept waiting
    wait_until(model.waiting.is_set, what="the review's model call")
    assert "Goes by Ada" not in user_notes(root)
    model.gate.set()
    wait_until(lambda: "Goes by Ada" in user_notes(root),
               what="the server's child to finish the review")
    wait_until(lambda: log_lines(root), what="the review's log line")


def forgotten_skill(root: Path, last_curated_days_ago: float = 8) -> Path:
    """A skill nobody used for 100 days, and a curator that last ran a while ago."""
    long_ago = time.time() - 100 * DAY
    store = SkillsStore(root / "skills", bundled=None, clock=lambda: long_ago)
    store.create("forgotten", "---\nname: forgotten\ndescription: Old.\n---\n# Old\n", by="user")
    last_run = time.time() - last_curated_days_ago * DAY
    (root / "skills" / ".curator.json").write_text(json.dumps({"last_run": last_run}))
    return root / "skills" / ".archive" / "forgotten" / "SKILL.md"


def test_the_gateway_reviews_after_its_turns_and_curates(environ: dict[str, str], root: Path,
                                                         llm: FakeLLM, model: Model) -> None:
    gateway_home(root, llm.openai_base_url, learning={"memory_nudge_turns": 1,
                                                      "skill_nudge_iterations": 0})
    archived = forgotten_skill(root)
    model.chat.append(Reply(text="Hi Lin."))
    model.review.extend([memory_add("Name is Lin"), Reply(text="Saved.")])
    with gateway(environ, root) as gw:
        wait_until(archived.exists, what="the gateway's curator tick")
        reply = httpx.post(f"{gw.url}/v1/chat/completions", timeout=60,
                           headers={"Authorization": f"Bearer {KEY}"},
                           json={"model": "default", "messages": [
                               {"role": "user", "content": "I am Lin"}]})
        assert reply.status_code == 200 and "Hi Lin." in reply.text
        wait_until(lambda: len(log_lines(root)) == 2, what="the gateway's review")
    assert [line["event"] for line in log_lines(root)] == ["curator", "review"]
    assert "Name is Lin" in user_notes(root)


@pytest.mark.parametrize("cli_mode", ["daemon"], indirect=True)
def test_a_standalone_server_curates_as_it_starts(environ: dict[str, str], root: Path,
                                                  llm: FakeLLM, model: Model) -> None:
    write_fake_provider(root, llm.openai_base_url)
    configure(root, learning={"enabled": False})
    archived = forgotten_skill(root)
    model.chat.append(Reply(text="pong"))
    result = subprocess.run([sys.executable, "-m", "hermes", "-z", "ping"], env=environ,
                            text=True, capture_output=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, "pong\n"), result.stderr
    assert (root / "run" / "daemon.pid").exists()
    wait_until(archived.exists, what="the server's curator tick")
