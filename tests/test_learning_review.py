"""The background review through the real runtime: container, agent loop, litellm and the
fake LLM. The fake answers the conversation and the review from separate queues (a
review request is one whose last user message is a review pass)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.home import home_from_path
from learning_support import REVIEW_MARK, Model, log_lines, memory_add, serving, todo_call

SKILL = """---
name: release-notes
description: Write release notes from the git log since the last tag.
---
# Release notes

1. `git describe --tags --abbrev=0` finds the last tag.
2. `git log --oneline TAG..HEAD` lists the changes; group them as Added, Fixed, Changed.
"""


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
def llm(model: Model) -> Iterator[FakeLLM]:
    with serving(model) as fake:
        yield fake


@pytest.fixture
def make_runtime(root: Path, environ: dict[str, str], llm: FakeLLM,
                 tmp_path: Path) -> Iterator[Callable[..., Runtime]]:
    """Start a runtime of a home on the fake LLM with these overrides."""
    write_fake_provider(root, llm.openai_base_url)
    work = tmp_path / "work"
    work.mkdir()
    started: list[Runtime] = []

    def make(*overrides: str) -> Runtime:
        home = home_from_path(root)
        composed = compose_config(home, environ, [f"environment.cwd={work}",
                                                  "agent.max_iterations=6", *overrides])
        started.append(build_runtime(home, composed.config, environ).start())
        return started[-1]

    yield make
    for runtime in started:
        runtime.container.learning().stop_all()
        runtime.container.learning().wait(30)
        runtime.close()


def new_agent(runtime: Runtime) -> Any:
    return runtime.container.agent_factory().new_session(Interaction(stream=False))


def outcomes_of(runtime: Runtime) -> list[Any]:
    seen: list[Any] = []
    runtime.container.learning().subscribe(seen.append)
    return seen


def test_the_memory_pass_saves_what_the_model_asks_and_not_before_the_interval(
        make_runtime: Callable[..., Runtime], model: Model, root: Path) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=2", "learning.skill_nudge_iterations=0")
    seen = outcomes_of(runtime)
    model.chat.extend([Reply(text="Hello Grace."), Reply(text="Tabs it is.")])
    model.review.extend([memory_add("Prefers tabs over spaces"), Reply(text="Saved.")])
    agent = new_agent(runtime)
    agent.run_turn("I am Grace")
    assert runtime.container.learning().wait(10)
    assert model.reviews == [] and log_lines(root) == []  # one turn: not due yet
    agent.run_turn("I always indent with tabs")
    assert runtime.container.learning().wait(30)
    assert "Prefers tabs over spaces" in (root / "memories" / "USER.md").read_text()
    first = model.reviews[0]
    assert first.last_user_text.startswith("[Background review: memory]")
    assert sorted(first.tool_names) == ["memory", "skill_manage", "skill_view", "skills_list"]
    sent = [m.get("content") for m in first.body["messages"]]
    assert "I always indent with tabs" in sent and "Tabs it is." in sent
    assert [o.summary() for o in seen] == ["memory updated"]
    [line] = log_lines(root)
    assert line["event"] == "review" and line["passes"] == ["memory"]
    assert line["changes"] == [{"kind": "memory", "action": "add", "target": "user",
                                "by": "review"}]
    stored = runtime.container.sessions().messages(agent.session_id)
    assert not any(REVIEW_MARK in str(m.get("content")) for m in stored)  # never in the session


def test_the_skill_pass_creates_a_skill_written_by_review(
        make_runtime: Callable[..., Runtime], model: Model, root: Path) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=0", "learning.skill_nudge_iterations=2")
    seen = outcomes_of(runtime)
    model.chat.extend([todo_call(), todo_call(), Reply(text="Notes written.")])
    create = {"action": "create", "name": "release-notes", "category": "writing",
              "content": SKILL}
    model.review.extend([Reply(tool_calls=[ToolCall("skill_manage", create)]),
                         Reply(text="Created release-notes.")])
    new_agent(runtime).run_turn("write the release notes")
    assert runtime.container.learning().wait(30)
    skills = runtime.container.skills()
    assert skills.get("release-notes").path == root / "skills" / "writing" / "release-notes"
    assert skills.usage("release-notes").created_by == "review"
    assert model.reviews[0].last_user_text.startswith("[Background review: skills]")
    assert [o.summary() for o in seen] == ["skill release-notes created"]
    assert log_lines(root)[0]["changes"][0]["by"] == "review"


def test_the_skill_pass_improves_a_skill_without_counting_a_use(
        make_runtime: Callable[..., Runtime], model: Model) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=0", "learning.skill_nudge_iterations=1")
    skills = runtime.container.skills()
    skills.create("release-notes", SKILL, category="writing", by="user")
    seen = outcomes_of(runtime)
    model.chat.extend([todo_call(), Reply(text="Done.")])
    fix = {"action": "patch", "name": "release-notes", "old_string": "group them as",
           "new_string": "skip merge commits; group them as"}
    model.review.extend([Reply(tool_calls=[ToolCall("skill_view", {"name": "release-notes"})]),
                         Reply(tool_calls=[ToolCall("skill_manage", fix)]),
                         Reply(text="Patched.")])
    new_agent(runtime).run_turn("notes again, without the merges")
    assert runtime.container.learning().wait(30)
    assert "skip merge commits" in skills.read("release-notes")
    record = skills.usage("release-notes")
    assert (record.uses, record.created_by, record.updated_by) == (0, "user", "review")
    assert [o.summary() for o in seen] == ["skill release-notes updated"]


def test_a_running_review_never_delays_the_next_turn_nor_runs_twice(
        make_runtime: Callable[..., Runtime], model: Model) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=1", "learning.skill_nudge_iterations=0")
    model.gate.clear()  # the review's model call hangs until the test opens the gate
    model.chat.extend([Reply(text="one"), Reply(text="two"), Reply(text="three")])
    agent = new_agent(runtime)
    agent.run_turn("first")
    assert model.waiting.wait(10)  # the review is running...
    assert agent.run_turn("second").text == "two"  # ...and the next turn is answered
    assert agent.run_turn("third").text == "three"
    learning = runtime.container.learning()
    assert learning.running() == 1 and len(model.reviews) == 1  # due again, never doubled
    model.gate.set()
    assert learning.wait(30)
    assert len(model.reviews) == 1


def test_another_process_never_reviews_the_same_session_at_once(
        make_runtime: Callable[..., Runtime], model: Model) -> None:
    every_turn = ("learning.memory_nudge_turns=1", "learning.skill_nudge_iterations=0")
    first, second = make_runtime(*every_turn), make_runtime(*every_turn)  # as two processes
    model.gate.clear()
    model.chat.extend([Reply(text="one"), Reply(text="two")])
    agent = new_agent(first)
    agent.run_turn("first")
    assert model.waiting.wait(10)
    other = second.container.agent_factory().resume(agent.session_id, Interaction(stream=False))
    assert other.run_turn("second").text == "two"  # its review is due, but one runs
    assert second.container.learning().running() == 0
    model.gate.set()
    assert first.container.learning().wait(30)
    assert len(model.reviews) == 1


def test_a_held_review_starts_once_released(
        make_runtime: Callable[..., Runtime], model: Model, root: Path) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=1", "learning.skill_nudge_iterations=0")
    learning = runtime.container.learning()
    learning.hold()  # the CLI holds reviews back while it prints the answer
    model.chat.append(Reply(text="one"))
    new_agent(runtime).run_turn("first")
    wait_until(lambda: learning.held() == 1, what="the review to wait for its release")
    assert model.reviews == []
    learning.release()
    assert learning.wait(30) and len(model.reviews) == 1


def test_learning_off_reviews_nothing(
        make_runtime: Callable[..., Runtime], model: Model, root: Path) -> None:
    runtime = make_runtime("learning.enabled=false", "learning.memory_nudge_turns=1",
                           "learning.skill_nudge_iterations=1")
    model.chat.extend([todo_call(), Reply(text="a"), Reply(text="b")])
    agent = new_agent(runtime)
    agent.run_turn("one")
    agent.run_turn("two")
    assert runtime.container.learning().running() == 0
    assert model.reviews == [] and log_lines(root) == []


def test_a_resumed_session_keeps_its_count(
        make_runtime: Callable[..., Runtime], model: Model) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=3", "learning.skill_nudge_iterations=0")
    model.chat.extend([Reply(text="a"), Reply(text="b"), Reply(text="c")])
    factory = runtime.container.agent_factory()
    agent = new_agent(runtime)
    agent.run_turn("one")
    agent.run_turn("two")
    again = factory.resume(agent.session_id, Interaction(stream=False))  # another process
    again.run_turn("three")
    assert runtime.container.learning().wait(30)
    assert len(model.reviews) == 1



def test_the_review_runs_on_learning_model(make_runtime: Callable[..., Runtime], model: Model,
                                           llm: FakeLLM) -> None:
    runtime = make_runtime("learning.memory_nudge_turns=1", "learning.skill_nudge_iterations=0",
                           "learning.model=gpt-4o-mini")
    model.chat.append(Reply(text="one"))
    new_agent(runtime).run_turn("first")
    assert runtime.container.learning().wait(30)
    assert [r.model for r in llm.requests] == ["gpt-4o", "gpt-4o-mini"]
