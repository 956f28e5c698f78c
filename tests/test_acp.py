"""`hermes acp` driven by the official ACP SDK's client over stdio, as an editor drives it.

Every test starts the real command in a subprocess; the model is the fake LLM on
loopback (litellm's own HTTP stack talks to it), the sessions are the profile's real
SQLite store.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

import images
from acp_support import Editor, connect, eventually, prompt_of
from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

FORCE_PUSH = "git push --force nowhere main 2>/dev/null; echo pushed"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def configured(root: Path, llm: FakeLLM) -> Path:
    write_fake_provider(root, llm.openai_base_url)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The editor's project directory (the session's cwd)."""
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "acp-stderr.log"


def tool_results(llm: FakeLLM) -> list[str]:
    """The content of every tool result the model was sent, in order of the calls."""
    seen: dict[str, str] = {}
    for request in llm.requests:
        for result in request.tool_results:
            seen.setdefault(result.call_id, str(result.content))
    return list(seen.values())


def runs(kinds: list[str]) -> list[str]:
    """``kinds`` with repeats in a row collapsed (an answer streams in several chunks)."""
    return [kind for i, kind in enumerate(kinds) if i == 0 or kinds[i - 1] != kind]


def stored_sessions(home: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "state.db") as db:
        return db.execute("SELECT id, source FROM sessions ORDER BY started_at").fetchall()


def test_a_prompt_streams_its_tool_call_and_answer(environ, configured: Path, llm: FakeLLM,
                                                   project: Path, log: Path) -> None:
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "pwd"}, id="call_pwd")]),
             Reply(text="You are in the project."))
    editor = Editor()

    async def scenario() -> tuple[object, object, str]:
        async with connect(editor, environ, stderr=log) as (conn, hello):
            session = await conn.new_session(cwd=str(project))
            response = await conn.prompt(session_id=session.session_id,
                                         prompt=prompt_of("where am I?"))
            return hello, response, session.session_id

    hello, response, session_id = asyncio.run(scenario())
    assert hello.agent_capabilities.load_session, hello
    assert hello.agent_info.name == "hermes"
    assert response.stop_reason == "end_turn"
    assert runs(editor.kinds(session_id)) == ["tool_call", "tool_call_update",
                                              "agent_message_chunk"]
    started, finished = editor.of_kind("tool_call")[0], editor.of_kind("tool_call_update")[0]
    assert (started.tool_call_id, started.kind, started.title, started.status) == \
        ("call_pwd", "execute", "pwd", "in_progress")
    assert (finished.tool_call_id, finished.status) == ("call_pwd", "completed")
    assert str(project) in finished.content[0].content.text  # ran in the session's cwd
    assert finished.raw_output == json.loads(tool_results(llm)[0])  # an object, not a string
    assert editor.text() == "You are in the project."
    assert stored_sessions(configured) == [(session_id, "acp")]
    offered = llm.requests[0].tool_names
    assert "terminal" in offered and "clarify" not in offered  # questions go in the answer


def test_permission_requests_answered_allow_and_reject(environ, configured: Path,
                                                       llm: FakeLLM, project: Path,
                                                       log: Path) -> None:
    def push_attempt(call_id: str) -> None:
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": FORCE_PUSH}, id=call_id)]),
                 Reply(text=f"{call_id} over"))

    editor = Editor(answers=["once", "deny", "always"])
    for call_id in ("first", "second", "third", "fourth"):
        push_attempt(call_id)

    async def scenario() -> None:
        async with connect(editor, environ, stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            for attempt in range(4):
                await conn.prompt(session_id=session.session_id,
                                  prompt=prompt_of(f"push, attempt {attempt}"))

    asyncio.run(scenario())
    asked = [(call.tool_call_id, call.title, options) for call, options, _ in editor.permissions]
    offered = ["once", "session", "always", "deny"]
    assert asked == [(call_id, FORCE_PUSH, offered) for call_id in ("first", "second", "third")]
    assert all(call.tool_call_id in shown for call, _, shown in editor.permissions)
    results = [json.loads(content) for content in tool_results(llm)]
    assert results[0]["output"] == "pushed\n"  # allowed once
    assert "the user denied this command" in results[1]["error"]  # rejected
    assert results[2]["output"] == results[3]["output"] == "pushed\n"  # always: not asked again
    allowlist = json.loads((configured / "approvals.json").read_text())
    assert [entry["key"] for entry in allowlist["always"]] == ["git_force_push"]
    assert [u.status for u in editor.of_kind("tool_call_update")] == \
        ["completed", "failed", "completed", "completed"]


def test_cancel_ends_the_turn_and_rejects_a_pending_question(environ, configured: Path,
                                                             llm: FakeLLM, project: Path,
                                                             log: Path) -> None:
    llm.push(Reply(text="too late", delay=60),
             Reply(tool_calls=[ToolCall("terminal", {"command": FORCE_PUSH}, id="push")]),
             Reply(text="not sent: the turn is over"))
    editor = Editor(answers=["never"])

    async def cancelled_prompt(conn, session_id: str, text: str) -> tuple[str, float]:
        turn = asyncio.create_task(conn.prompt(session_id=session_id, prompt=prompt_of(text)))
        yield_point = len(llm.requests) + 1
        await eventually(lambda: len(llm.requests) >= yield_point, what="the model call")
        if text == "ask":
            await eventually(lambda: editor.permissions, what="the permission request")
        started = time.monotonic()
        await conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(turn, 20)
        return response.stop_reason, time.monotonic() - started

    async def scenario() -> list[tuple[str, float]]:
        async with connect(editor, environ, stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            return [await cancelled_prompt(conn, session.session_id, "slow"),
                    await cancelled_prompt(conn, session.session_id, "ask")]

    (slow, slow_took), (ask, ask_took) = asyncio.run(scenario())
    assert (slow, ask) == ("cancelled", "cancelled")
    assert slow_took < 10 and ask_took < 10  # the model's 60 s delay was not waited for
    assert len(llm.requests) == 2 and llm.script.pending == 1  # nothing after the cancel


def test_load_session_replays_it_then_resumes(environ, configured: Path, llm: FakeLLM,
                                              project: Path, log: Path) -> None:
    notes = project / "notes.txt"
    notes.write_text("alpha\n")
    llm.push(Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"}, id="read")]),
             Reply(text="The notes say alpha."), Reply(text="Still alpha."))

    async def first() -> str:
        async with connect(Editor(), environ, stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            await conn.prompt(session_id=session.session_id, prompt=prompt_of("read my notes"))
            return session.session_id

    session_id = asyncio.run(first())
    editor = Editor()

    async def second() -> list[str]:
        async with connect(editor, environ, stderr=log) as (conn, _):
            await conn.load_session(cwd=str(project), session_id=session_id)
            replayed = list(editor.wire)  # as the messages arrived, before any handling
            await conn.prompt(session_id=session_id, prompt=prompt_of("and now?"))
            return replayed

    replayed = asyncio.run(second())
    assert replayed == ["response", *["session/update"] * 4, "response"]  # init, replay, load
    assert editor.kinds(session_id)[:4] == ["user_message_chunk", "tool_call",
                                            "tool_call_update", "agent_message_chunk"]
    assert editor.text("user_message_chunk") == "read my notes"
    assert editor.of_kind("tool_call")[0].locations[0].path == str(notes)
    assert editor.text().startswith("The notes say alpha.")
    resumed = llm.requests[-1].body["messages"]
    assert [m["content"] for m in resumed if m["role"] == "user"] == ["read my notes",
                                                                        "and now?"]
    assert stored_sessions(configured) == [(session_id, "acp")]  # the same session went on


def test_loading_an_open_session_again_ends_the_earlier_copy(environ, configured: Path,
                                                              llm: FakeLLM, project: Path,
                                                              log: Path) -> None:
    ended = project.parent / "ended.jsonl"
    with (configured / "config.yaml").open("a") as config:
        config.write(f"hooks:\n  on_session_end:\n    - command: sh -c 'cat >> {ended}; "
                     f"echo >> {ended}'\n")
    llm.push(Reply(text="Hello."))

    async def scenario() -> tuple[str, list[str]]:
        async with connect(Editor(), environ | {"HERMES_ACCEPT_HOOKS": "1"},
                           stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            await conn.prompt(session_id=session.session_id, prompt=prompt_of("hi"))
            await conn.load_session(cwd=str(project), session_id=session.session_id)
            return session.session_id, ended_sessions()

    def ended_sessions() -> list[str]:
        lines = ended.read_text().splitlines() if ended.exists() else []
        return [json.loads(line)["session_id"] for line in lines if line]

    session_id, while_open = asyncio.run(scenario())
    assert while_open == [session_id]  # the earlier copy's session-end hooks ran
    assert ended_sessions() == [session_id, session_id]  # and the loaded one's at the end


def test_loading_an_unknown_session_is_an_error(environ, configured: Path, project: Path,
                                                log: Path) -> None:
    from acp import RequestError

    async def scenario() -> RequestError:
        async with connect(Editor(), environ, stderr=log) as (conn, _):
            with pytest.raises(RequestError) as raised:
                await conn.load_session(cwd=str(project), session_id="nosuchsession")
            return raised.value

    error = asyncio.run(scenario())
    assert 'no session matches "nosuchsession"' in str(error)


@pytest.mark.parametrize("offered", [True, False], ids=["editor", "disk"])
def test_file_reads_see_the_editors_unsaved_buffer(environ, configured: Path, llm: FakeLLM,
                                                   project: Path, log: Path,
                                                   offered: bool) -> None:
    source = project / "main.py"
    source.write_text("saved = 1\n")
    llm.push(Reply(tool_calls=[ToolCall("read_file", {"path": "main.py"})]), Reply(text="ok"))
    editor = Editor(buffers={str(source): "unsaved = 2\n"} if offered else None)

    async def scenario() -> None:
        async with connect(editor, environ, stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            await conn.prompt(session_id=session.session_id, prompt=prompt_of("read main.py"))

    asyncio.run(scenario())
    content = json.loads(tool_results(llm)[0])["content"]
    assert content == ("     1|unsaved = 2" if offered else "     1|saved = 1")


def test_file_writes_go_to_the_editor_with_a_diff(environ, configured: Path, llm: FakeLLM,
                                                  project: Path, log: Path) -> None:
    source = project / "main.py"
    source.write_text("value = 1\n")
    llm.push(Reply(tool_calls=[ToolCall("patch", {"path": "main.py", "old_string": "value = 1",
                                                  "new_string": "value = 2"}, id="edit")]),
             Reply(text="done"))
    editor = Editor(buffers={str(source): "value = 1  # unsaved\n"}, writable=True)

    async def scenario() -> None:
        async with connect(editor, environ, stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            await conn.prompt(session_id=session.session_id, prompt=prompt_of("bump it"))

    asyncio.run(scenario())
    assert editor.writes == {str(source): "value = 2  # unsaved\n"}  # the buffer, edited
    assert source.read_text() == "value = 1\n"  # the disk is the editor's to save
    diff = editor.of_kind("tool_call_update")[0].content[0]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == \
        ("diff", str(source), "value = 1", "value = 2")


def test_the_todo_list_is_sent_as_the_plan(environ, configured: Path, llm: FakeLLM,
                                           project: Path, log: Path) -> None:
    todos = [{"id": "1", "content": "read the code", "status": "completed"},
             {"id": "2", "content": "fix the bug", "status": "in_progress"}]
    llm.push(Reply(tool_calls=[ToolCall("todo", {"todos": todos})]), Reply(text="planned"))
    editor = Editor()

    async def scenario() -> None:
        async with connect(editor, environ, stderr=log) as (conn, _):
            session = await conn.new_session(cwd=str(project))
            await conn.prompt(session_id=session.session_id, prompt=prompt_of("plan it"))

    asyncio.run(scenario())
    (plan,) = editor.of_kind("plan")
    assert [(entry.content, entry.status) for entry in plan.entries] == \
        [("read the code", "completed"), ("fix the bug", "in_progress")]
    assert editor.of_kind("tool_call")[0].kind == "think"


@pytest.mark.parametrize("argv", [["--help"], ["profile", "list"], ["acp", "--help"]])
def test_other_commands_never_import_the_sdk(argv: list[str], environ) -> None:
    code = ("import sys\nfrom hermes.cli.main import run\n"
            f"try:\n    run({argv!r})\nexcept SystemExit:\n    pass\n"
            "print('SDK loaded' if 'acp' in sys.modules else 'SDK not loaded', file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)
    assert proc.stderr.strip().splitlines()[-1] == "SDK not loaded", proc.stderr
    if argv == ["--help"]:
        assert "acp" in proc.stdout


def test_at_a_terminal_it_says_where_to_start_it(environ, configured: Path) -> None:
    child = pexpect.spawn(sys.executable, ["-m", "hermes", "acp"], env=environ,
                          encoding="utf-8", timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert child.before.strip() == ("error: hermes acp talks to an editor over stdin/stdout; "
                                    "start it from the editor's agent settings (README: "
                                    "Editors), not at a terminal")


def test_files_instead_of_pipes_are_refused(environ, configured: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text('{"jsonrpc": "2.0", "id": 0, "method": "initialize", '
                        '"params": {"protocolVersion": 1}}\n')
    with requests.open() as stdin, (tmp_path / "out").open("w") as stdout:
        done = subprocess.run([sys.executable, "-m", "hermes", "acp"], env=environ,
                              stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: hermes acp needs pipes on stdin and stdout, as an "
                                   "editor connects them; stdin is a file here (pipe it: "
                                   "`... | hermes acp | ...`)")


def test_an_image_in_a_prompt_reaches_the_model(environ, configured: Path, llm: FakeLLM,
                                                project: Path, log: Path) -> None:
    from acp import image_block
    from acp.exceptions import RequestError

    shot = images.png(3, 2)
    llm.push(Reply(text="a red rectangle"))
    editor = Editor()

    async def scenario() -> tuple[object, object, str]:
        async with connect(editor, environ, stderr=log) as (conn, hello):
            session = await conn.new_session(cwd=str(project))
            answered = await conn.prompt(session_id=session.session_id, prompt=[
                *prompt_of("what is this?"),
                image_block(base64.b64encode(shot).decode(), "image/png")])
            try:
                await conn.prompt(session_id=session.session_id, prompt=[
                    *prompt_of("and this?"), image_block("bm90IGFuIGltYWdl", "image/png")])
            except RequestError as exc:
                return hello, answered, json.dumps(exc.data)
            return hello, answered, "no error"

    hello, answered, refusal = asyncio.run(scenario())
    assert hello.agent_capabilities.prompt_capabilities.image
    assert answered.stop_reason == "end_turn" and editor.text() == "a red rectangle"
    assert images.wire_images(llm.requests[-1]) == [
        ("image/png", base64.b64encode(shot).decode())]
    assert "prompt[1] image" in refusal and "PNG" in refusal, refusal
    assert len(llm.requests) == 1  # the bad image ran no turn
