"""Delegation as a user meets it, through the real CLI: a one-shot whose children are
refused dangerous commands, a chat where a child's command is asked of the person
naming the child and Ctrl-C stops the children, and `hermes sessions show` drawing
the tree of a parent and its children."""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from conftest import ok, wait_until, write_fake_provider
from delegation_support import Team, delegate, results_of, serving
from fakellm import FakeLLM, Reply, ToolCall


@pytest.fixture
def team() -> Team:
    return Team()


@pytest.fixture
def llm(root: Path, team: Team) -> Iterator[FakeLLM]:
    with serving(team) as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def sessions(root: Path) -> list[tuple[str, str, str | None, str | None]]:
    """``(id, source, parent_id, end_reason)`` of every stored session, oldest first."""
    with sqlite3.connect(root / "state.db") as db:
        return db.execute("SELECT id, source, parent_id, end_reason FROM sessions "
                          "ORDER BY started_at").fetchall()


def test_a_one_shot_refuses_its_childrens_dangerous_commands(
        hermes_subprocess, team: Team, llm: FakeLLM, tmp_path: Path) -> None:
    target = tmp_path / "shared"
    target.mkdir(mode=0o755)
    team.parent.extend([delegate("open it up"), Reply(text="the sub-agent was refused")])
    team.child("open it up",
               Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod -R 777 {target}"})]),
               Reply(text="refused: nobody could approve it"))
    proc = hermes_subprocess("-z", "open up shared", "approvals.mode=manual")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "the sub-agent was refused\n"
    assert target.stat().st_mode & 0o777 == 0o755
    answer = str(team.requests_of("open it up")[1].tool_results[0].content)
    assert "refused" in answer and "nobody can approve it" in answer
    [report] = results_of(llm.requests[-1])["results"]
    assert report["status"] == "done"


def test_sessions_show_draws_the_parent_and_its_children(hermes, team: Team, llm: FakeLLM,
                                                         root: Path) -> None:
    team.parent.extend([delegate("part one", "part two"), Reply(text="both done")])
    assert ok(hermes("-z", "do both parts")) == "both done\n"
    (parent, source, _, _), *children = sessions(root)
    assert source == "cli" and {c[1:3] for c in children} == {("delegate", parent)}
    shown = ok(hermes("sessions", "show", parent[:8]))
    tree = shown[shown.index("tree\n"):].splitlines()[1:4]
    assert re.fullmatch(rf"  {parent[:12]}  cli  do both parts  · completed · .*"
                        r"← this session", tree[0]), tree
    by_title = {line.split("  ")[4]: line for line in tree[1:]}
    for title in ("part one", "part two"):
        assert re.fullmatch(r"    └─ [0-9a-f]{12}  delegate  " + title + r"  · completed · .*",
                            by_title[title]), tree
    child_view = ok(hermes("sessions", "show", children[0][0]))
    assert f"parent    {parent}" in child_view and "← this session" in child_view


@pytest.fixture
def chat(environ, llm: FakeLLM, tmp_path: Path) -> Iterator[pexpect.spawn]:
    env = environ | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, ["-m", "hermes", "chat"], env=env,
                          cwd=str(tmp_path), encoding="utf-8", timeout=60,
                          dimensions=(40, 200))
    try:
        child.expect("/help for commands")
        yield child
    finally:
        child.close(force=True)


def test_in_a_chat_a_childs_command_is_asked_naming_the_child(chat: pexpect.spawn,
                                                               team: Team, llm: FakeLLM,
                                                               tmp_path: Path) -> None:
    target = tmp_path / "shared"
    target.mkdir(mode=0o755)
    team.parent.extend([delegate("open it up"), Reply(text="the sub-agent opened it")])
    team.child("open it up",
               Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod -R 777 {target}"})]),
               Reply(text="opened"))
    chat.sendline("open up shared")
    chat.expect(r'sub-agent 1 \("open it up"\) asks to run:')
    chat.expect(r"allow\? \[o/s/a/d\]")
    chat.sendline("o")
    chat.expect("the sub-agent opened it")
    assert target.stat().st_mode & 0o777 == 0o777


def test_ctrl_c_in_a_chat_stops_the_children(chat: pexpect.spawn, team: Team, llm: FakeLLM,
                                             root: Path) -> None:
    team.gate.clear()
    team.parent.append(delegate("first", "second"))
    chat.sendline("do two things")
    wait_until(lambda: len(team.child_requests) == 2, what="both children at the model")
    chat.sendintr()
    chat.expect("interrupted")
    team.parent.append(Reply(text="still here"))
    chat.sendline("are you there?")
    chat.expect("still here")
    children = [s for s in sessions(root) if s[1] == "delegate"]
    assert [s[3] for s in children] == ["interrupted", "interrupted"]
    assert len(team.child_requests) == 2  # neither child called its model again
