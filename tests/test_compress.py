"""Context compression end to end: real runtime and session store, litellm against the
fake LLM. Windows are set small (``agent.compression.context_window``) so a few large
messages cross the threshold; sizes are in characters, about 4 per estimated token."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Fault, RecordedRequest, Reply, ToolCall
from hermes.agent.compress import CLEARED_NOTE
from hermes.agent.factory import Interaction
from hermes.agent.loop import Agent
from hermes.agent.repair import repair_messages
from hermes.agent.summary import SUMMARY_END, SUMMARY_HEADER, TRUNCATION_NOTE
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_from_path
from hermes.tools.base import ToolSpec, object_schema

WINDOW = 40_000
"""Tokens: the threshold (0.5) is 20k, the protected tail (0.2) 8k."""
BIG = 30_000
"""Characters of one large message or tool output: ~7.5k tokens."""
TOOLSETS = "toolsets.enabled=[file,terminal,todo,clarify,memory,skills,session_search]"
"""Fixed, so the tool schemas' share of the window stays what the sizes assume."""


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def make_runtime(root: Path, environ, llm: FakeLLM) -> Iterator[Callable[..., object]]:
    """Start a runtime with config overrides; each test starts at most one."""
    write_fake_provider(root, llm.openai_base_url)
    home = home_from_path(root)
    with ExitStack() as stack:
        def make(*overrides: str) -> object:
            composed = compose_config(home, environ, ["agent.max_iterations=5", TOOLSETS,
                                                      *overrides])
            runtime = stack.enter_context(build_runtime(home, composed.config, environ))
            runtime.container.tools().register(ToolSpec(
                name="blob", toolset="todo", description="returns `size` characters",
                parameters=object_schema(("size",), size={"type": "integer"}),
                handler=lambda args, **_: "x" * args["size"]))
            return runtime

        yield make


def new_agent(runtime) -> Agent:
    return runtime.container.agent_factory().new_session(Interaction(stream=False))


def big(tag: str) -> str:
    return f"{tag} " + "y" * BIG


def is_summary_request(request: RecordedRequest) -> bool:
    return request.body["messages"][0]["content"].startswith("You compress")


def notes(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m["role"] == "user" and isinstance(m["content"], str)
            and (SUMMARY_HEADER in m["content"] or "truncated" in m["content"])]


def test_old_tool_outputs_are_cleared_first_at_the_threshold(make_runtime, llm) -> None:
    runtime = make_runtime(f"agent.compression.context_window={WINDOW}")
    agent = new_agent(runtime)
    first_session = agent.session_id
    for size in (1_000, BIG, BIG):  # the first exchange's output is protected (the head)
        llm.push(Reply(tool_calls=[ToolCall("blob", {"size": size})]), Reply(text="ok"))
        agent.run_turn("fetch")
        assert agent.session_id == first_session
    assert agent.compressor.estimate(agent.messages) < 0.5 * WINDOW
    llm.push(Reply(tool_calls=[ToolCall("blob", {"size": BIG})]), Reply(text="done"))
    assert agent.run_turn("fetch").text == "done"
    assert agent.session_id != first_session and not any(map(is_summary_request, llm.requests))
    outputs = [r.content for r in llm.requests[-1].tool_results]
    assert outputs == ["x" * 1_000, CLEARED_NOTE.format(chars=BIG),
                       CLEARED_NOTE.format(chars=BIG), "x" * BIG]
    assert repair_messages(agent.messages) == agent.messages


def test_summaries_replace_the_middle_and_later_ones_update_them(make_runtime, llm) -> None:
    runtime = make_runtime(f"agent.compression.context_window={WINDOW}")
    store = runtime.container.sessions()
    agent = new_agent(runtime)
    root_id = agent.session_id
    llm.push(*(Reply(text=f"r{i}") for i in range(1, 4)))
    for text in ("first", big("U2"), big("U3")):
        agent.run_turn(text)
    llm.push(Reply(text="## Goal\nFIRST-SUMMARY"), Reply(text="r4"))
    assert agent.run_turn(big("U4")).text == "r4"

    summary_request = llm.requests[3]
    assert is_summary_request(summary_request) and not summary_request.body.get("tools")
    asked = summary_request.body["messages"][1]["content"]
    assert "U2 " in asked and "U3 " in asked and "U4 " not in asked
    assert "previous-summary" not in asked
    assert [m["content"][:3] for m in agent.messages if m["role"] != "system"] == [
        "fir", "r1", SUMMARY_HEADER[:3], "r3", "U4 ", "r4"]
    assert "FIRST-SUMMARY" in notes(agent.messages)[0]["content"]

    child = store.get_session(agent.session_id)
    assert child.parent_id == root_id and store.get_session(root_id).end_reason == "compression"
    assert child.system_prompt == store.get_session(root_id).system_prompt
    assert agent.ctx.session_id == child.id
    resumed = runtime.container.agent_factory().resume(child.id, Interaction())
    assert resumed.messages == [{**m, "content": m.get("content")} for m in agent.messages]

    llm.push(Reply(text="r5"), Reply(text="## Goal\nSECOND-SUMMARY"), Reply(text="r6"))
    agent.run_turn(big("U5"))
    agent.run_turn(big("U6"))
    asked = llm.requests[6].body["messages"][1]["content"]
    assert "<previous-summary>\n## Goal\nFIRST-SUMMARY" in asked
    assert "U4 " in asked and "U5 " in asked and "U6 " not in asked
    assert [n["content"].count(SUMMARY_HEADER) for n in notes(agent.messages)] == [1]
    assert "SECOND-SUMMARY" in notes(agent.messages)[0]["content"]
    assert "FIRST-SUMMARY" not in notes(agent.messages)[0]["content"]
    assert store.get_session(agent.session_id).parent_id == child.id
    assert store.get_session(child.id).end_reason == "compression"
    assert repair_messages(agent.messages) == agent.messages


def test_without_a_summary_the_middle_is_dropped_with_a_note(make_runtime, llm) -> None:
    runtime = make_runtime(f"agent.compression.context_window={WINDOW}")
    agent = new_agent(runtime)
    llm.push(*(Reply(text=f"r{i}") for i in range(1, 4)))
    for text in ("first", big("U2"), big("U3")):
        agent.run_turn(text)
    llm.push(Fault.authentication(), Reply(text="r4"))  # the summariser fails for good
    assert agent.run_turn(big("U4")).text == "r4"
    (note,) = notes(agent.messages)
    assert note["content"] == TRUNCATION_NOTE.format(count=3)
    sent = llm.requests[-1].body["messages"]
    assert [m["content"][:3] for m in sent[1:]] == ["fir", "r1", "[Ea", "r3", "U4 "]
    assert runtime.container.sessions().messages(agent.session_id)[2]["content"] == \
        note["content"]
    assert repair_messages(agent.messages) == agent.messages


def test_overflow_compresses_with_the_summary_model_and_retries(make_runtime, llm) -> None:
    runtime = make_runtime("agent.compression.model=gpt-4o-mini")  # window from litellm
    agent = new_agent(runtime)
    first_session = agent.session_id
    llm.push(Reply(text="r1"), Reply(text="r2"))
    agent.run_turn("U1 " + "z" * 8_000)
    agent.run_turn("U2 " + "z" * 8_000)
    llm.push(Fault.context_length_exceeded(), Reply(text="## Goal\nSHORT"),
             Reply(text="fits now"))
    result = agent.run_turn("U3 " + "z" * 8_000)
    assert (result.text, result.exit_reason) == ("fits now", "completed")
    assert [r.model for r in llm.requests] == ["gpt-4o"] * 3 + ["gpt-4o-mini", "gpt-4o"]
    assert "U2 " in llm.requests[3].body["messages"][1]["content"]
    sent = llm.requests[4].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[3]["content"].startswith(SUMMARY_HEADER)  # the summary, then U3 itself
    assert sent[3]["content"].split(SUMMARY_END + "\n\n")[1].startswith("U3 ")
    assert agent.session_id != first_session and agent.compressor.window < 10_000
    assert repair_messages(agent.messages) == agent.messages


def test_nothing_to_compress_lets_the_overflow_error_through(make_runtime, llm) -> None:
    agent = new_agent(make_runtime())
    llm.push(Fault.context_length_exceeded())
    result = agent.run_turn("hello")
    assert result.exit_reason == "error" and "context_overflow" in (result.error or "")
    assert len(llm.requests) == 1


def test_compression_can_be_turned_off(make_runtime, llm) -> None:
    runtime = make_runtime("agent.compression.enabled=false",
                           "agent.compression.context_window=1000")
    agent = new_agent(runtime)
    llm.push(Reply(text="a"), Reply(text="b"))
    agent.run_turn(big("one"))
    agent.run_turn(big("two"))
    assert agent.compressor is None and len(llm.requests) == 2
    assert json.dumps(llm.requests[1].body).count("y" * 100) >= 2
