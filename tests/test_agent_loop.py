"""The agent loop end to end: real runtime, real tools, litellm against the fake LLM."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.agent.loop import FORCED_ANSWER, GRACE_NOTE, INTERRUPTED_NOTE, Agent
from hermes.agent.repair import repair_messages
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_from_path
from hermes.tools.registry import ToolSpec


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def runtime(root: Path, environ, llm: FakeLLM, tmp_path: Path) -> Iterator[object]:
    write_fake_provider(root, llm.openai_base_url)
    work = tmp_path / "work"
    work.mkdir()
    home = home_from_path(root)
    composed = compose_config(home, environ, ["agent.max_iterations=3",
                                              f"environment.cwd={work}"])
    rt = build_runtime(home, composed.config, environ)
    with rt:
        yield rt


def new_agent(runtime, **how) -> Agent:
    return runtime.container.agent_factory().new_session(Interaction(**how))


def test_tool_call_then_answer_is_persisted(runtime, llm: FakeLLM, tmp_path: Path) -> None:
    (tmp_path / "work" / "notes.txt").write_text("the answer is 42\n")
    llm.push(Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"}, id="c1")]),
             Reply(text="It says 42."))
    agent = new_agent(runtime)
    result = agent.run_turn("what is in notes.txt?")
    assert (result.text, result.exit_reason, result.iterations) == ("It says 42.", "completed", 2)
    seen = llm.requests[1].tool_results
    assert seen[0].call_id == "c1" and "the answer is 42" in seen[0].content
    rows = runtime.container.sessions().messages(agent.session_id)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["tool_calls"][0]["function"]["name"] == "read_file"
    session = runtime.container.sessions().get_session(agent.session_id)
    assert session.input_tokens == 20 and session.output_tokens == 10
    assert "Session: " + agent.session_id in session.system_prompt


def test_budget_then_exactly_one_grace_call_then_forced_answer(runtime, llm: FakeLLM) -> None:
    ask = Reply(tool_calls=[ToolCall("todo", {"action": "read"})])
    llm.push(ask, ask, ask, ask)  # 3 budgeted calls + 1 grace call, all asking for tools
    result = new_agent(runtime).run_turn("loop forever")
    assert (result.exit_reason, result.iterations, result.text) == (
        "budget_exhausted", 4, FORCED_ANSWER)
    assert len(llm.requests) == 4 and llm.pending == 0
    assert llm.requests[3].last_user_text == GRACE_NOTE


def test_grace_call_can_answer(runtime, llm: FakeLLM) -> None:
    ask = Reply(tool_calls=[ToolCall("todo", {"action": "read"})])
    llm.push(ask, ask, ask, Reply(text="best effort"))
    result = new_agent(runtime).run_turn("go")
    assert (result.exit_reason, result.text) == ("budget_exhausted", "best effort")


def test_malformed_arguments_are_repaired(runtime, llm: FakeLLM, tmp_path: Path) -> None:
    llm.push(Reply(tool_calls=[ToolCall("write_file",
                                        '{"path": "out.txt", "content": "hi",', id="w")]),
             Reply(text="done"))
    assert new_agent(runtime).run_turn("write").exit_reason == "completed"
    assert (tmp_path / "work" / "out.txt").read_text() == "hi"


def test_unknown_tools_go_back_to_the_model_then_give_up(runtime, llm: FakeLLM) -> None:
    wrong = Reply(tool_calls=[ToolCall("raed_file", {"path": "x"})])
    llm.push(wrong, Reply(text="sorry"))
    agent = new_agent(runtime)
    assert agent.run_turn("x").text == "sorry"
    assert 'read_file' in llm.requests[1].tool_results[0].content  # the close name is offered
    llm.push(wrong, wrong, wrong, wrong)
    runtime_iterations = agent.max_iterations
    agent.max_iterations = 10
    result = agent.run_turn("again")
    agent.max_iterations = runtime_iterations
    assert result.exit_reason == "error" and "do not exist" in (result.error or "")
    assert llm.pending == 0


def test_parallel_safe_calls_run_concurrently_results_in_call_order(runtime, llm) -> None:
    barrier = threading.Barrier(3, timeout=10)

    def meet(args: dict, **ctx: object) -> str:
        barrier.wait()  # only returns if all three calls run at the same time
        return json.dumps({"tag": args["tag"]})

    tools = runtime.container.tools()
    tools.register(ToolSpec(name="meet", toolset="todo", description="wait for the others",
                            parameters={"type": "object", "properties": {
                                "tag": {"type": "string"}}, "required": ["tag"]},
                            handler=meet, parallel_safe=True))
    calls = [ToolCall("meet", {"tag": t}, id=f"id-{t}") for t in "abc"]
    llm.push(Reply(tool_calls=calls), Reply(text="met"))
    assert new_agent(runtime).run_turn("meet").text == "met"
    results = llm.requests[1].tool_results
    assert [r.call_id for r in results] == ["id-a", "id-b", "id-c"]
    assert [json.loads(r.content)["tag"] for r in results] == ["a", "b", "c"]


def test_writers_to_the_same_path_run_in_order(runtime, llm, tmp_path: Path) -> None:
    calls = [ToolCall("write_file", {"path": "f.txt", "content": str(i)}) for i in range(5)]
    llm.push(Reply(tool_calls=calls), Reply(text="ok"))
    new_agent(runtime).run_turn("write five times")
    assert (tmp_path / "work" / "f.txt").read_text() == "4"


def test_interrupt_cancels_unstarted_calls_and_the_session_goes_on(runtime, llm) -> None:
    agent_box: list[Agent] = []

    def stop(args: dict, **ctx: object) -> str:
        agent_box[0].interrupt()
        return json.dumps({"stopped": True})

    runtime.container.tools().register(ToolSpec(
        name="stop_here", toolset="todo", description="x",
        parameters={"type": "object", "properties": {}}, handler=stop))
    llm.push(Reply(tool_calls=[ToolCall("stop_here", {}, id="s1"),
                               ToolCall("todo", {"action": "read"}, id="s2")]))
    agent = new_agent(runtime)
    agent_box.append(agent)
    result = agent.run_turn("do two things")
    assert result.exit_reason == "interrupted"
    tool_rows = [m for m in agent.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_rows] == ["s1", "s2"]
    assert "cancelled" in tool_rows[1]["content"]
    assert repair_messages(agent.messages) == agent.messages  # already valid
    llm.push(Reply(text="still here"))
    assert agent.run_turn("are you there?").text == "still here"


def test_an_interrupted_message_stays_its_own_turn(runtime, llm: FakeLLM) -> None:
    llm.push(Reply(text="far too slow", delay=30))
    agent = new_agent(runtime)
    results: list[object] = []
    turn = threading.Thread(target=lambda: results.append(agent.run_turn("a slow question")))
    turn.start()
    llm.wait_for_requests(1, timeout=30)
    agent.interrupt()
    turn.join(timeout=30)
    assert [r.exit_reason for r in results] == ["interrupted"]  # type: ignore[attr-defined]
    llm.push(Reply(text="still here"))
    assert agent.run_turn("are you there?").text == "still here"
    sent = llm.requests[-1].body["messages"]
    assert [(m["role"], m["content"]) for m in sent[1:]] == [
        ("user", "a slow question"), ("assistant", INTERRUPTED_NOTE),
        ("user", "are you there?")]
    stored = runtime.container.sessions().messages(agent.session_id)
    assert [(m["role"], m["content"]) for m in stored] == [
        *((m["role"], m["content"]) for m in sent[1:]), ("assistant", "still here")]


def test_hook_context_goes_into_the_user_message_not_the_system_prompt(runtime, llm) -> None:
    runtime.container.hooks().subscribe(
        "pre_llm_call", lambda user_message, **_: "[recalled: user likes tea]", "test")
    llm.push(Reply(text="tea it is"))
    agent = new_agent(runtime)
    system_before = agent.messages[0]["content"]
    agent.run_turn("drink?")
    request = llm.requests[0]
    assert request.last_user_text == "drink?\n\n[recalled: user likes tea]"
    assert request.body["messages"][0]["content"] == system_before


def test_dangerous_commands_need_approval(runtime, llm, tmp_path: Path) -> None:
    victim = tmp_path / "work" / "victim"
    victim.mkdir()
    command = f"rm -rf {victim} && git push --force origin main"
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": command})]), Reply(text="no"))
    new_agent(runtime).run_turn("clean up")
    assert victim.exists() and "refused" in llm.requests[1].tool_results[0].content
    asked: list[str] = []

    def approve(cmd: str, reason: str) -> str:
        asked.append(reason)
        return "once"

    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod -R 777 {victim}"})]),
             Reply(text="done"))
    new_agent(runtime, interactive=True, approve=approve).run_turn("open it up")
    assert asked and (victim.stat().st_mode & 0o777) == 0o777


def test_secrets_never_reach_the_model(runtime, llm, tmp_path: Path) -> None:
    (tmp_path / "work" / "leak.txt").write_text("key=sk-fake-test-key-1234\n")
    llm.push(Reply(tool_calls=[ToolCall("read_file", {"path": "leak.txt"})]), Reply(text="ok"))
    new_agent(runtime).run_turn("read it")
    content = llm.requests[1].tool_results[0].content
    assert "sk-fake-test-key-1234" not in content and "<redacted>" in content


def test_resume_restores_the_transcript_and_system_prompt(runtime, llm) -> None:
    llm.push(Reply(text="first"))
    agent = new_agent(runtime)
    agent.run_turn("one")
    resumed = runtime.container.agent_factory().resume(agent.session_id, Interaction())
    assert resumed.messages == [{**m, "content": m.get("content")} for m in agent.messages]
    llm.push(Reply(text="second"))
    resumed.run_turn("two")
    sent = llm.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0]["content"] == agent.messages[0]["content"]
    db = sqlite3.connect(runtime.home.sessions_db)
    assert db.execute("pragma integrity_check").fetchone() == ("ok",)


def test_context_overflow_calls_the_compression_hook_once(runtime, llm: FakeLLM) -> None:
    from fakellm import Fault

    seen: list[int] = []

    def compress(messages: list[dict], **_: object) -> list[dict]:
        seen.append(len(messages))
        return [messages[0], messages[-1]]  # system prompt + the newest user message

    runtime.container.hooks().subscribe("context_overflow", compress, "test")
    llm.push(Reply(text="a"), Fault.context_length_exceeded(), Reply(text="fits now"))
    agent = new_agent(runtime)
    agent.run_turn("first")
    result = agent.run_turn("second")
    assert (result.text, result.exit_reason) == ("fits now", "completed")
    assert seen == [4] and len(llm.requests[2].body["messages"]) == 2
    llm.push(Fault.context_length_exceeded(), Fault.context_length_exceeded())
    failed = agent.run_turn("third")
    assert failed.exit_reason == "error" and "context_overflow" in (failed.error or "")


def test_exit_reasons_are_recorded_on_the_session(runtime, llm: FakeLLM) -> None:
    from fakellm import Fault

    llm.push(Reply(text="fine"), Fault.authentication())
    agent = new_agent(runtime)
    store = runtime.container.sessions()
    agent.run_turn("one")
    assert store.get_session(agent.session_id).end_reason == "completed"
    agent.run_turn("two")
    assert store.get_session(agent.session_id).end_reason == "error"


def test_one_turns_tool_output_is_capped_as_a_whole(root: Path, environ, llm: FakeLLM,
                                                     tmp_path: Path) -> None:
    write_fake_provider(root, llm.openai_base_url)
    work = tmp_path / "big"
    work.mkdir()
    for name in "abc":
        (work / f"{name}.txt").write_text("".join(f"{name}-line-{i:03d}\n" for i in range(200)))
    home = home_from_path(root)
    config = compose_config(home, environ, [f"environment.cwd={work}",
                                            "agent.turn_tool_output_max_chars=9500"]).config
    calls = [ToolCall("read_file", {"path": f"{n}.txt"}, id=f"r{n}") for n in "abc"]
    llm.push(Reply(tool_calls=calls), Reply(text="read"))
    with build_runtime(home, config, environ) as rt:
        new_agent(rt).run_turn("read all three")
    a, b, c = (r.content for r in llm.requests[1].tool_results)
    assert "a-line-199" in a and "b-line-199" in b  # the first two fit the turn's budget
    spilled = json.loads(c)
    assert spilled["truncated"] is True and Path(spilled["full_result_path"]).is_file()
    assert len(c) <= 2_500


def test_interrupt_stops_a_running_command(runtime, llm: FakeLLM, tmp_path: Path) -> None:
    import time

    from hermes.agent.loop import AgentEvents

    marker = tmp_path / "work" / "finished"
    started = threading.Event()
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"sleep 30; touch {marker}"})]))
    agent = new_agent(runtime, events=AgentEvents(on_tool_start=lambda call: started.set()))
    box: dict[str, object] = {}
    worker = threading.Thread(target=lambda: box.update(result=agent.run_turn("wait")))
    worker.start()
    assert started.wait(timeout=30)
    begun = time.monotonic()
    agent.interrupt()
    worker.join(timeout=20)
    assert not worker.is_alive() and time.monotonic() - begun < 10
    assert box["result"].exit_reason == "interrupted"
    result = json.loads([m for m in agent.messages if m["role"] == "tool"][-1]["content"])
    assert result["cancelled"] is True and result["exit_code"] == 130
    assert not marker.exists()


def test_a_new_session_is_titled_by_its_first_message(runtime, llm: FakeLLM) -> None:
    llm.push(Reply(text="a"), Reply(text="b"))
    agent = new_agent(runtime)
    agent.run_turn("\n  Fix the flaky login test in auth/tests.py please, it fails on CI " * 2)
    agent.run_turn("second message")
    title = runtime.container.sessions().get_session(agent.session_id).title
    assert title.startswith("Fix the flaky login test") and len(title) <= 60
    assert title.endswith("…")
