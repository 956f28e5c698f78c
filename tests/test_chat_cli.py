"""`hermes chat` as a user runs it: real processes, the fake LLM on loopback."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import refused, wait_until, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

pytestmark = pytest.mark.both_modes  # in-process and through the warm server


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def configured(root: Path, llm: FakeLLM) -> Path:
    write_fake_provider(root, llm.openai_base_url)
    return root


def test_oneshot_prints_only_the_answer(hermes_subprocess, configured: Path, llm: FakeLLM,
                                        tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("alpha\n")
    llm.push(Reply(tool_calls=[ToolCall("read_file", {"path": str(tmp_path / "data.txt")})]),
             Reply(text="The file says alpha."))
    proc = hermes_subprocess("-z", "what does data.txt say?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The file says alpha.\n"
    assert "read_file" in proc.stderr and "session " in proc.stderr


def test_oneshot_failure_exits_non_zero(hermes_subprocess, configured: Path, llm) -> None:
    from fakellm import Fault

    llm.push(Fault.authentication())
    proc = hermes_subprocess("chat", "-q", "hello")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "error:" in proc.stderr and "auth" in proc.stderr
    assert "session" not in proc.stderr and session_ids(configured) == []  # nothing answered
    llm.push(Reply(text="hi"), Fault.authentication())
    first = hermes_subprocess("-z", "hello again")
    failed = hermes_subprocess("chat", "--continue", "-q", "and now?")
    assert failed.returncode == 1 and "session " in failed.stderr
    assert session_ids(configured) == [first.stderr.split()[-1]]  # an answered one stays


def session_ids(home: Path) -> list[str]:
    db = sqlite3.connect(home / "state.db")
    try:
        return [row[0] for row in db.execute("select id from sessions")]
    finally:
        db.close()


def test_an_unreachable_endpoint_is_named_and_leaves_no_session(hermes, root: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound but not listening: connections are refused
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        write_fake_provider(root, url)
        result = hermes("-z", "hello")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        f"error: cannot reach the model endpoint {url} (connection refused) — check "
        "`hermes config get provider.api_base` and run `hermes doctor`\n")
    assert session_ids(root) == []


def test_no_credentials_explains_what_to_set(hermes_subprocess) -> None:
    proc = hermes_subprocess("chat", "-q", "hello")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "OPENAI_API_KEY" in proc.stderr and "config set" in proc.stderr


def test_continue_and_resume(hermes, configured: Path, llm: FakeLLM) -> None:
    llm.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    first = hermes("chat", "-q", "first")
    assert first.exit_code == 0 and first.stdout == "one\n"
    session = first.stderr.strip().rsplit(" ", 1)[-1]
    assert hermes("chat", "--continue", "-q", "second").stdout == "two\n"
    assert [m["content"] for m in llm.requests[1].body["messages"][1:]] == [
        "first", "one", "second"]
    assert hermes("chat", "--resume", session[:8], "-q", "third").stdout == "three\n"
    assert len(llm.requests[2].body["messages"]) == 6
    missing = hermes("chat", "--resume", "ffffffff", "-q", "x")
    assert missing.exit_code == 2 and "error:" in missing.stderr


def test_overrides_and_flags_apply_for_one_run(hermes, configured: Path, llm) -> None:
    llm.push(Reply(text="ok"))
    result = hermes("chat", "-q", "hi", "provider.model=gpt-4.1", "--toolsets", "todo")
    assert result.exit_code == 0
    assert llm.requests[0].model == "gpt-4.1" and llm.requests[0].tool_names == ["todo"]


def test_kill_9_mid_turn_loses_nothing_and_the_session_resumes(
        hermes_subprocess, environ, cli_mode: str, configured: Path, llm: FakeLLM,
        tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A")
    llm.push(Reply(tool_calls=[ToolCall("read_file", {"path": str(tmp_path / "a.txt")})]),
             Reply(text="never arrives", delay=60))
    proc = subprocess.Popen([sys.executable, "-m", "hermes", "-z", "read a"], env=environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        llm.wait_for_requests(2, timeout=60)  # the tool result is persisted before this call
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    db = sqlite3.connect(configured / "state.db")
    # Through the warm server, its worker sees the client go and interrupts the turn,
    # which ends with an interrupted note; a process killed in-process writes nothing more.
    interrupted = cli_mode == "daemon"
    if interrupted:
        wait_until(lambda: db.execute("select end_reason from sessions").fetchone()
                   == ("interrupted",))
    assert db.execute("pragma integrity_check").fetchone() == ("ok",)
    roles = [r[0] for r in db.execute("select role from messages order by id")]
    assert roles == ["user", "assistant", "tool"] + ["assistant"] * interrupted
    db.close()
    llm.push(Reply(text="resumed fine"))
    resumed = hermes_subprocess("chat", "--continue", "-q", "go on")
    assert resumed.returncode == 0 and resumed.stdout == "resumed fine\n"
    assert [m["role"] for m in llm.requests[2].body["messages"]] == [
        "system", "user", "assistant", "tool", *["assistant"] * interrupted, "user"]


def test_an_unquoted_question_is_refused_with_the_quoted_form(hermes, configured: Path,
                                                              llm: FakeLLM) -> None:
    refused(hermes("-z", "what", "is", "up"), "'is' is not an override",
            'quote the question: hermes -z "what is up"')
    refused(hermes("chat", "-q", "what's", "up", "agent.max_iterations=2"),
            "quote the question: hermes chat -q \"what's up\"")
    refused(hermes("chat", "hello"), 'to ask one question: hermes -z "hello"')
    assert llm.requests == []


def test_dash_reads_the_question_from_standard_input(hermes_subprocess, hermes,
                                                     configured: Path, llm: FakeLLM) -> None:
    llm.push(Reply(text="not much"), Reply(text="still not much"))
    proc = hermes_subprocess("-z", "-", input="what is up\nin two lines\n")
    assert proc.returncode == 0 and proc.stdout == "not much\n", proc.stderr
    assert llm.requests[0].last_user_text == "what is up\nin two lines"
    assert hermes("chat", "-q", "-", input="and now?").stdout == "still not much\n"
    assert llm.requests[1].last_user_text == "and now?"
    refused(hermes("-z", "-", input="  \n"), "-z - read no question from standard input")


def test_an_empty_question_is_refused(hermes, configured: Path, llm: FakeLLM) -> None:
    refused(hermes("-z", ""), "-z needs the question to ask")
    refused(hermes("chat", "-q", ""), "-q needs the question to ask")
    refused(hermes("chat", "-q", " \n "), "-q needs the question to ask")
    assert llm.requests == []
