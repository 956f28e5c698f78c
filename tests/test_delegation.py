"""delegate_task end to end: a real runtime, real tools and the session store, litellm
against the fake LLM. The parent and its children are separate conversations of one
fake model (delegation_support.Team)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until, write_fake_provider
from delegation_support import Approver, Team, delegate, overlap, results_of, serving, system_prompt
from fakellm import FakeLLM, Fault, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.home import home_from_path

FORCE_PUSH = "git push --force nowhere main 2>/dev/null; echo pushed"
TOOLSETS = "toolsets.enabled=[file,terminal,todo,clarify,memory,cron,delegation]"


@pytest.fixture
def team() -> Team:
    return Team()


@pytest.fixture
def llm(team: Team) -> Iterator[FakeLLM]:
    with serving(team) as fake:
        yield fake


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


@pytest.fixture
def start(root: Path, environ: dict[str, str], llm: FakeLLM, work: Path
          ) -> Iterator[Callable[..., Runtime]]:
    """Start a runtime of the test's home with these overrides (stopped at the end)."""
    write_fake_provider(root, llm.openai_base_url)
    started: list[Runtime] = []

    def open_runtime(*overrides: str) -> Runtime:
        home = home_from_path(root)
        composed = compose_config(home, environ, [TOOLSETS, f"environment.cwd={work}",
                                                  *overrides])
        runtime = build_runtime(home, composed.config, environ).start()
        started.append(runtime)
        return runtime

    yield open_runtime
    for runtime in started:
        runtime.close()


def parent_turn(runtime: Runtime, text: str = "split the work", **how: Any) -> Any:
    agent = runtime.container.agent_factory().new_session(Interaction(**how))
    return agent, agent.run_turn(text)



def test_a_child_works_from_a_focused_prompt_and_its_summary_comes_back(
        start, team: Team, llm: FakeLLM, root: Path) -> None:
    (root / "memories").mkdir(parents=True, exist_ok=True)
    (root / "memories" / "MEMORY.md").write_text("The user's cat is called Biscuit.\n")
    team.parent.extend([delegate("count the tests", context="they live in tests/"),
                        Reply(text="There are 3.")])
    team.child("count the tests", Reply(text="3 tests, all in tests/."))
    runtime = start()
    parent, result = parent_turn(runtime)
    assert result.text == "There are 3."
    [child_request] = team.requests_of("count the tests")
    prompt = system_prompt(child_request)
    assert "count the tests" in prompt and "they live in tests/" in prompt
    assert "Biscuit" not in prompt and parent.session_id not in prompt
    assert "Biscuit" in system_prompt(llm.requests[0])  # the parent's own prompt has it
    messages = child_request.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]  # none of the parent's history
    assert messages[1]["content"] == "count the tests"
    [report] = results_of(llm.requests[-1])["results"]
    assert (report["status"], report["summary"]) == ("done", "3 tests, all in tests/.")
    assert report["iterations"] == 1 and report["tokens"] == {"input": 10, "output": 5}
    assert "cost_usd" in report
    store = runtime.container.sessions()
    child = store.get_session(report["session_id"])
    assert (child.parent_id, child.source, child.end_reason) == (
        parent.session_id, "delegate", "completed")
    assert child.title == "count the tests"


def test_children_get_the_parents_tools_but_never_the_blocked_ones(
        start, team: Team, llm: FakeLLM) -> None:
    team.parent.extend([delegate("look around"), Reply(text="ok")])
    team.child("look around", Reply(tool_calls=[ToolCall("clarify", {"question": "which?"})]),
               Reply(text="looked"))
    parent, _ = parent_turn(start())
    parent_tools = set(llm.requests[0].tool_names)
    assert {"clarify", "memory", "cronjob", "delegate_task", "terminal"} <= parent_tools
    first, second = team.requests_of("look around")
    assert set(first.tool_names) == parent_tools - {"clarify", "memory", "cronjob",
                                                     "delegate_task"}
    answer = str(second.tool_results[0].content)
    assert "cannot ask the user questions" in answer


def test_a_task_narrows_the_toolsets_within_the_parents(start, team: Team,
                                                        llm: FakeLLM) -> None:
    team.parent.extend([delegate("read only", toolsets=["file", "clarify", "web"]),
                        Reply(text="ok")])
    parent_turn(start())
    [request] = team.requests_of("read only")
    assert sorted(request.tool_names) == ["patch", "read_file", "search_files", "write_file"]
    assert results_of(llm.requests[-1])["toolsets_left_out"] == ["web"]


def test_at_most_max_concurrency_children_run_at_once(start, team: Team,
                                                      llm: FakeLLM) -> None:
    goals = [f"part {i}" for i in range(1, 6)]
    team.parent.extend([delegate(*goals), Reply(text="all parts done")])
    for goal in goals:
        team.child(goal, Reply(text=f"{goal} done", delay=0.4))
    _, result = parent_turn(start("delegation.max_concurrency=2"))
    assert result.text == "all parts done"
    children = [r.index for r in team.child_requests]
    spans = llm.spans
    assert overlap(spans[i] for i in children) == 2
    reports = results_of(llm.requests[-1])["results"]
    assert [(r["task"], r["status"], r["summary"]) for r in reports] == [
        (i, "done", f"part {i} done") for i in range(1, 6)]


def test_a_child_at_the_depth_limit_cannot_delegate(start, team: Team, llm: FakeLLM) -> None:
    team.parent.extend([delegate("plan"), Reply(text="ok")])
    team.child("plan", delegate("sub-plan"), Reply(text="did it myself"))
    parent_turn(start())
    first, second = team.requests_of("plan")
    assert "delegate_task" not in first.tool_names
    refusal = str(second.tool_results[0].content)
    assert "cannot delegate further (delegation.max_depth is 1)" in refusal
    assert team.requests_of("sub-plan") == []


def test_max_depth_two_lets_children_delegate_once_more(start, team: Team,
                                                        llm: FakeLLM) -> None:
    team.parent.extend([delegate("plan"), Reply(text="ok")])
    team.child("plan", delegate("sub-plan"), Reply(text="planned"))
    team.child("sub-plan", Reply(text="sub-planned"))
    runtime = start("delegation.max_depth=2")
    parent, _ = parent_turn(runtime)
    assert "delegate_task" in team.requests_of("plan")[0].tool_names
    assert "delegate_task" not in team.requests_of("sub-plan")[0].tool_names
    store = runtime.container.sessions()
    child = store.get_session(results_of(llm.requests[-1])["results"][0]["session_id"])
    grandchild = store.get_session(results_of(team.requests_of("plan")[1])["results"][0][
        "session_id"])
    assert child.parent_id == parent.session_id and grandchild.parent_id == child.id


def test_a_failing_child_is_reported_and_its_siblings_finish(start, team: Team,
                                                            llm: FakeLLM) -> None:
    team.parent.extend([delegate("good", "bad", "endless", max_iterations=1),
                        Reply(text="reported")])
    team.child("bad", Fault.server_error(), Fault.server_error())  # max_retries is 1
    loop = Reply(tool_calls=[ToolCall("todo", {})])
    team.child("endless", loop, loop)
    _, result = parent_turn(start())
    reports = {r["goal"]: r for r in results_of(llm.requests[-1])["results"]}
    assert reports["good"]["status"] == "done"
    assert reports["bad"]["status"] == "failed" and "server had an error" in \
        reports["bad"]["error"]
    assert reports["endless"]["status"] == "budget_exhausted"
    assert result.text == "reported"


def test_a_child_past_its_time_is_stopped_and_reported_failed(start, team: Team,
                                                               llm: FakeLLM) -> None:
    team.parent.extend([delegate("slow"), Reply(text="too slow")])
    team.child("slow", Reply(text="late", delay=30))
    runtime = start("delegation.timeout=1")
    _, result = parent_turn(runtime)
    [report] = results_of(llm.requests[-1])["results"]
    assert report["status"] == "failed" and "timed out" in report["error"]
    assert report["seconds"] < 10
    assert runtime.container.sessions().get_session(report["session_id"]).end_reason == \
        "interrupted"


def test_the_parents_interrupt_stops_its_children(start, team: Team, llm: FakeLLM) -> None:
    team.gate.clear()
    team.parent.append(delegate("one", "two", "three"))
    runtime = start("delegation.max_concurrency=2")
    agent = runtime.container.agent_factory().new_session(Interaction())
    results: list[Any] = []
    turn = threading.Thread(target=lambda: results.append(agent.run_turn("go")))
    turn.start()
    wait_until(lambda: len(team.child_requests) == 2, what="two children at the model")
    agent.interrupt()
    turn.join(10)
    assert not turn.is_alive() and results[0].exit_reason == "interrupted"
    store = runtime.container.sessions()
    children = [s for s in store.list_sessions(source="delegate")]
    assert len(children) == 2  # the third never started
    assert all(s.end_reason == "interrupted" for s in children)
    team.gate.set()
    assert len(team.child_requests) == 2
    tool_message = store.messages(agent.session_id)[-2]
    assert '"interrupted before it started"' in tool_message["content"]


def test_manual_approvals_in_a_child_are_asked_naming_it(start, team: Team, llm: FakeLLM,
                                                        work: Path) -> None:
    team.parent.extend([delegate("push it"), Reply(text="pushed")])
    team.child("push it", Reply(tool_calls=[ToolCall("terminal", {"command": FORCE_PUSH})]),
               Reply(text="it is pushed"))
    approver = Approver("once")
    parent_turn(start(), interactive=True, approve=approver)
    [request] = approver.requests
    assert request.command == FORCE_PUSH
    assert request.requester == 'sub-agent 1 ("push it")'
    ran = str(team.requests_of("push it")[1].tool_results[0].content)
    assert "pushed" in ran and "refused" not in ran


def test_without_anyone_to_ask_a_childs_dangerous_command_is_refused(
        start, team: Team, llm: FakeLLM) -> None:
    team.parent.extend([delegate("push it"), Reply(text="could not")])
    team.child("push it", Reply(tool_calls=[ToolCall("terminal", {"command": FORCE_PUSH})]),
               Reply(text="refused, so not pushed"))
    parent_turn(start(), interactive=False)
    answer = str(team.requests_of("push it")[1].tool_results[0].content)
    assert "refused" in answer and "nobody can approve it" in answer
    [report] = results_of(llm.requests[-1])["results"]
    assert report["summary"] == "refused, so not pushed"


def test_children_follow_the_parents_approval_mode(start, team: Team, llm: FakeLLM) -> None:
    team.parent.extend([delegate("push it"), Reply(text="pushed")])
    team.child("push it", Reply(tool_calls=[ToolCall("terminal", {"command": FORCE_PUSH})]),
               Reply(text="pushed"))
    parent_turn(start("approvals.mode=off"), interactive=False)
    answer = str(team.requests_of("push it")[1].tool_results[0].content)
    assert "pushed" in answer and "refused" not in answer


def test_an_acp_command_not_listed_is_refused_before_anything_runs(
        start, team: Team, llm: FakeLLM) -> None:
    team.parent.extend([delegate("review", acp_command="claude --yolo"), Reply(text="no")])
    parent_turn(start("delegation.acp_commands=[hermes]"))
    answer = results_of(llm.requests[-1])
    assert "only these programs may run as ACP agents: hermes" in answer["error"]
    assert "delegation.acp_commands" in answer["error"]
    assert team.child_requests == []
