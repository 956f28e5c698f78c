"""terminal, process, todo and clarify, with real subprocesses through LocalEnvironment."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes.environments.base import CommandResult, Environment
from hermes.environments.local import LocalEnvironment
from hermes.errors import SandboxError
from hermes.tools.context import ToolContext
from hermes.tools.registry import ToolRegistry
from test_tools_support import call, make_context, make_registry


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    context = make_context(tmp_path)
    yield context
    context.processes.close()


@pytest.fixture
def tools() -> ToolRegistry:
    return make_registry()


def test_foreground_command(ctx: ToolContext, tools: ToolRegistry) -> None:
    result = call(tools, ctx, "terminal", {"command": "pwd; echo $HERMES_HOME; echo oops >&2"})
    assert result == {"output": f"{ctx.cwd}\n{ctx.home.path}\noops\n", "exit_code": 0}
    failed = call(tools, ctx, "terminal", {"command": "exit 3"})
    assert failed["exit_code"] == 3 and "error" not in failed
    assert "command is empty" in call(tools, ctx, "terminal", {"command": "  "})["error"]


def test_timeout_kills_the_whole_process_group(ctx: ToolContext, tools: ToolRegistry) -> None:
    started = time.monotonic()
    # ``sleep`` is a child of the shell and holds the output pipe; killing only the
    # shell would leave the call hanging for the full 30 seconds.
    result = call(tools, ctx, "terminal", {"command": "echo before; sleep 30; echo after",
                                           "timeout": 1})
    assert time.monotonic() - started < 10
    assert result["timed_out"] and result["exit_code"] == 124
    assert result["output"] == "before\n" and "background=true" in result["note"]


def test_background_job_lifecycle(ctx: ToolContext, tools: ToolRegistry) -> None:
    started = call(tools, ctx, "terminal", {"command": "echo one; sleep 0.5; echo two",
                                            "background": True})
    job = started["process_id"]
    assert started["status"] == "running" and job == "proc_1"
    listed = call(tools, ctx, "process", {"action": "list"})["processes"]
    assert [p["id"] for p in listed] == [job]
    done = call(tools, ctx, "process", {"action": "wait", "id": job, "timeout": 10})
    assert done["status"] == "exited 0" and not done["timed_out"]
    assert done["new_output"] == "one\ntwo\n"
    assert call(tools, ctx, "process", {"action": "poll", "id": job})["new_output"] == ""
    assert call(tools, ctx, "process", {"action": "log", "id": job, "lines": 1})[
        "output"] == "two"
    log = Path(ctx.spill_dir or "") / "processes" / f"{job}.log"
    assert log.read_text() == "one\ntwo\n"


def test_kill_and_wait_timeout(ctx: ToolContext, tools: ToolRegistry) -> None:
    job = call(tools, ctx, "terminal", {"command": "sleep 60 & sleep 60; echo never",
                                        "background": True})["process_id"]
    waited = call(tools, ctx, "process", {"action": "wait", "id": job, "timeout": 0.2})
    assert waited["timed_out"] and waited["status"] == "running"
    killed = call(tools, ctx, "process", {"action": "kill", "id": job})
    assert killed["status"].startswith("exited") and killed["exit_code"] != 0


def test_process_errors(ctx: ToolContext, tools: ToolRegistry) -> None:
    assert "needs the id" in call(tools, ctx, "process", {"action": "poll"})["error"]
    assert 'no background process "proc_9"' in call(
        tools, ctx, "process", {"action": "kill", "id": "proc_9"})["error"]
    assert "must be one of" in call(tools, ctx, "process", {"action": "restart"})["error"]


def test_background_jobs_belong_to_their_context(tmp_path: Path, tools: ToolRegistry) -> None:
    first, second = make_context(tmp_path / "a"), make_context(tmp_path / "b")
    try:
        call(tools, first, "terminal", {"command": "sleep 30", "background": True})
        assert call(tools, second, "process", {"action": "list"})["processes"] == []
    finally:
        first.processes.close()
    assert first.processes.jobs()[0].process.poll() is not None  # close() killed it


def test_background_is_refused_without_the_process_tool(ctx: ToolContext) -> None:
    tools = make_registry(["terminal"])
    result = call(tools, ctx, "terminal", {"command": "sleep 1", "background": True})
    assert 'unknown argument "background"' in result["error"]


def test_environment_without_background_support(ctx: ToolContext, tools: ToolRegistry) -> None:
    class Remote(Environment):
        kind = "remote"

        def run(self, command: str, *, timeout: float | None = None,
                cancelled: object = None) -> CommandResult:
            raise SandboxError("host unreachable")

    ctx.environment = Remote()
    assert "cannot run background processes" in call(
        tools, ctx, "terminal", {"command": "ls", "background": True})["error"]
    assert "the remote environment failed: host unreachable" in call(
        tools, ctx, "terminal", {"command": "ls"})["error"]


def test_local_environment_run_still_works(tmp_path: Path) -> None:
    env = make_context(tmp_path).environment
    assert isinstance(env, LocalEnvironment)
    assert env.run("echo hi") == CommandResult(0, "hi\n")


def test_todo_write_read_merge(ctx: ToolContext, tools: ToolRegistry) -> None:
    assert call(tools, ctx, "todo", {}) == {
        "todos": [], "summary": {"pending": 0, "in_progress": 0, "completed": 0}}
    call(tools, ctx, "todo", {"todos": [{"id": "1", "content": "plan"},
                                        {"id": "2", "content": "build", "status": "in_progress"}]})
    merged = call(tools, ctx, "todo", {"merge": True, "todos": [
        {"id": "1", "status": "completed"}, {"id": "3", "content": "ship"}]})
    assert [(t["id"], t["status"]) for t in merged["todos"]] == [
        ("1", "completed"), ("2", "in_progress"), ("3", "pending")]
    assert merged["summary"] == {"pending": 1, "in_progress": 1, "completed": 1}
    replaced = call(tools, ctx, "todo", {"todos": [{"id": "9", "content": "only"}]})
    assert [t["id"] for t in replaced["todos"]] == ["9"]
    assert call(tools, ctx, "todo", {})["todos"] == replaced["todos"]


def test_todo_errors(ctx: ToolContext, tools: ToolRegistry) -> None:
    bad_status = call(tools, ctx, "todo", {"todos": [{"id": "1", "content": "x",
                                                      "status": "done"}]})
    assert "must be one of: completed, in_progress, pending" in bad_status["error"]
    no_content = call(tools, ctx, "todo", {"merge": True, "todos": [{"id": "new"}]})
    assert 'todo "new" is new and needs a content' in no_content["error"]
    assert call(tools, ctx, "todo", {})["todos"] == []  # a failed write changes nothing


def test_clarify_asks_in_interactive_chat(tmp_path: Path, tools: ToolRegistry) -> None:
    asked: list[tuple[str, list[str] | None]] = []

    def answer(question: str, choices: list[str] | None, cancelled: object) -> str:
        asked.append((question, choices))
        return "blue"

    ctx = make_context(tmp_path, interactive=True, clarify=answer)
    result = call(tools, ctx, "clarify", {"question": "Which colour?",
                                          "choices": ["red", "blue"]})
    assert result == {"question": "Which colour?", "answer": "blue"}
    assert asked == [("Which colour?", ["red", "blue"])]
    too_many = call(tools, ctx, "clarify", {"question": "?", "choices": list("abcdefg")})
    assert "at most 6 choices" in too_many["error"]


def test_clarify_errors_in_non_interactive_runs(tmp_path: Path, tools: ToolRegistry) -> None:
    for ctx in (make_context(tmp_path), make_context(tmp_path, clarify=lambda q, c, _: "x")):
        result = call(tools, ctx, "clarify", {"question": "Which colour?"})
        assert "non-interactive" in result["error"] and "assumption" in result["error"]


def test_results_are_redacted(tmp_path: Path, tools: ToolRegistry) -> None:
    ctx = make_context(tmp_path)
    ctx.home.env_file.write_text("OPENAI_API_KEY=sk-live-0123456789abcdefghij\nPIN=1234\n")
    ctx = make_context(tmp_path)  # the redactor reads the .env when the context is built
    # The sandbox hides the .env itself; a copy in the workspace shows what redaction does.
    (ctx.cwd / "leaked.txt").write_bytes(ctx.home.env_file.read_bytes())
    output = call(tools, ctx, "terminal", {"command": "cat leaked.txt"})["output"]
    assert "sk-live" not in output and "OPENAI_API_KEY=<redacted>" in output
    assert "PIN=1234" in output  # too short to be treated as a secret
    assert json.dumps(output)  # still valid JSON after redaction
