"""`delegate_task(acp_command=...)`: a child that is an external agent over ACP, here a
second profile's real `hermes acp` (a subprocess started through the SDK's client),
answering from the same fake LLM as the parent."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ok, wait_until, write_fake_provider
from delegation_support import Approver, Team, delegate, results_of, serving
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from hermes.agent.loop import AgentEvents
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.home import home_from_path

SECOND = "hermes -p second acp"


@pytest.fixture
def team() -> Team:
    return Team()


@pytest.fixture
def llm(team: Team) -> Iterator[FakeLLM]:
    with serving(team) as fake:
        yield fake


@pytest.fixture
def start(hermes, root: Path, environ: dict[str, str], llm: FakeLLM, tmp_path: Path
          ) -> Iterator[Callable[..., Runtime]]:
    """The default profile's runtime, allowed to start `hermes` as an ACP agent; the
    profile `second` exists and talks to the same fake LLM."""
    write_fake_provider(root, llm.openai_base_url)
    ok(hermes("profile", "create", "second"))
    write_fake_provider(root / "profiles" / "second", llm.openai_base_url)
    work = tmp_path / "work"
    work.mkdir()
    started: list[Runtime] = []

    def open_runtime(*overrides: str) -> Runtime:
        home = home_from_path(root)
        composed = compose_config(home, environ, [
            "delegation.acp_commands=[hermes]", f"environment.cwd={work}", *overrides])
        runtime = build_runtime(home, composed.config, environ).start()
        started.append(runtime)
        return runtime

    yield open_runtime
    for runtime in started:
        runtime.close()


def stored(home: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(home / "state.db") as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute("SELECT * FROM sessions ORDER BY started_at")]



def test_a_second_profiles_hermes_acp_runs_the_task(start, team: Team, llm: FakeLLM,
                                                    root: Path) -> None:
    team.parent.extend([delegate("list the files", acp_command=SECOND),
                        Reply(text="the other profile listed them")])
    team.child("list the files", Reply(tool_calls=[ToolCall("terminal", {"command": "ls"})]),
               Reply(text="two files: a and b"))
    runtime = start()
    agent = runtime.container.agent_factory().new_session(Interaction())
    result = agent.run_turn("ask the other profile")
    assert result.text == "the other profile listed them"
    [report] = results_of(llm.requests[-1])["results"]
    assert (report["status"], report["summary"], report["agent"], report["iterations"]) == (
        "done", "two files: a and b", SECOND, 1)
    theirs = stored(root / "profiles" / "second")
    assert [s["source"] for s in theirs] == ["acp"]  # the child ran in the second profile
    ours = [s for s in stored(root) if s["source"] == "delegate"]
    assert [(s["parent_id"], s["model"], s["end_reason"]) for s in ours] == [
        (agent.session_id, f"acp: {SECOND}", "completed")]
    assert report["session_id"] == ours[0]["id"]


def test_its_tool_calls_show_as_progress_while_it_runs(start, team: Team,
                                                       llm: FakeLLM) -> None:
    """The parent's UI (the chat's tool lines, an editor's tool calls, the API server's
    events) sees each tool call of the external agent as it starts and ends, inside the
    delegate_task call, not only the report 15 minutes later."""
    team.parent.extend([delegate("list the files", acp_command=SECOND),
                        Reply(text="listed")])
    team.child("list the files", Reply(tool_calls=[ToolCall("terminal", {"command": "ls"})]),
               Reply(text="two files"))
    shown: list[tuple[str, str, bool | None]] = []
    events = AgentEvents(
        on_tool_start=lambda call: shown.append(("start", call.name, None)),
        on_tool_end=lambda outcome: shown.append(("end", outcome.call.name,
                                                  outcome.is_error)))
    runtime = start()
    runtime.container.agent_factory().new_session(Interaction(events=events)).run_turn("go")
    step = 'sub-agent 1 ("list the files"): ls'
    assert shown == [("start", "delegate_task", None), ("start", step, None),
                     ("end", step, False), ("end", "delegate_task", False)]


def test_its_permission_requests_follow_the_parents_approvals(start, team: Team,
                                                              llm: FakeLLM,
                                                              tmp_path: Path) -> None:
    first, second = tmp_path / "work" / "first", tmp_path / "work" / "second"
    first.mkdir(mode=0o755)
    second.mkdir(mode=0o755)
    for target in (first, second):
        goal = f"open up {target.name}"
        team.child(goal, Reply(tool_calls=[ToolCall("terminal",
                                                    {"command": f"chmod -R 777 {target}"})]),
                   Reply(text=f"{target.name}: tried"))
    team.parent.extend([delegate("open up first", acp_command=SECOND), Reply(text="asked"),
                        delegate("open up second", acp_command=SECOND), Reply(text="no one")])
    runtime = start()
    approver = Approver("once")
    factory = runtime.container.agent_factory()
    factory.new_session(Interaction(interactive=True, approve=approver)).run_turn("first")
    [request] = approver.requests
    assert request.requester == 'sub-agent 1 ("open up first")'
    assert str(first) in request.command
    assert first.stat().st_mode & 0o777 == 0o777
    factory.new_session(Interaction(interactive=False)).run_turn("second")
    assert second.stat().st_mode & 0o777 == 0o755  # nobody to ask: rejected
    assert len(approver.requests) == 1


def test_its_budget_and_the_parents_interrupt_stop_it(start, team: Team, llm: FakeLLM,
                                                      root: Path) -> None:
    loop = Reply(tool_calls=[ToolCall("todo", {})])
    team.child("keep going", loop, loop, loop, loop)
    team.parent.extend([delegate("keep going", acp_command=SECOND, max_iterations=1),
                        Reply(text="it ran out")])
    runtime = start()
    factory = runtime.container.agent_factory()
    factory.new_session(Interaction()).run_turn("go on")
    [report] = results_of(llm.requests[-1])["results"]
    assert report["status"] == "budget_exhausted" and report["iterations"] > 1
    assert len(team.requests_of("keep going")) < 4  # cancelled, not run to the end

    team.gate.clear()
    team.parent.append(delegate("wait for me", acp_command=SECOND))
    agent = factory.new_session(Interaction())
    turn = threading.Thread(target=agent.run_turn, args=("wait",))
    turn.start()
    wait_until(lambda: team.requests_of("wait for me"), what="the ACP child at the model")
    agent.interrupt()
    turn.join(30)
    assert not turn.is_alive()
    ours = [s for s in stored(root) if s["source"] == "delegate"]
    assert ours[-1]["end_reason"] == "interrupted"
    wait_until(lambda: stored(root / "profiles" / "second")[-1]["end_reason"] == "interrupted",
               what="the second profile's session to end interrupted")
