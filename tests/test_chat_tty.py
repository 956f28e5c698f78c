"""The interactive chat through a real pseudo-terminal: typing, streaming, approval,
Ctrl-C, slash commands, /exit."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.loop import INTERRUPTED_NOTE

pytestmark = pytest.mark.both_modes  # in-process and through the warm server


def spawn_chat(environ: dict[str, str], cwd: Path) -> pexpect.spawn:
    """Interactive chat in a pty. Through the warm server when one runs: a chat that
    finds none runs in-process (its prompt shows at once) and starts one for later,
    so the daemon mode of these tests starts the server first."""
    env = environ | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    if "HERMES_NO_DAEMON" not in env:
        started = subprocess.run([sys.executable, "-m", "hermes", "daemon", "start"], env=env,
                                 capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
    child = pexpect.spawn(sys.executable, ["-m", "hermes", "chat"], env=env, cwd=str(cwd),
                          encoding="utf-8", timeout=60, dimensions=(40, 160))
    child.expect("/help for commands")
    return child


@pytest.fixture
def chat(root: Path, environ, tmp_path: Path):
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        child = spawn_chat(environ, tmp_path)
        try:
            yield child, llm
        finally:
            child.close(force=True)


def test_interactive_session(chat, root: Path, tmp_path: Path) -> None:
    child, llm = chat
    llm.push(Reply(text="Hello from the fake model"))
    child.sendline("hello")
    child.expect("Hello from the fake model")

    target = tmp_path / "shared"
    target.mkdir()
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod -R 777 {target}"})]),
             Reply(text="opened it up"))
    child.sendline("make it world-writable")
    child.expect(r"allow\? \[o/s/a/d\]")
    child.sendline("o")
    child.expect("opened it up")
    assert target.stat().st_mode & 0o777 == 0o777

    llm.push(Reply(text="far too slow", delay=30))
    child.sendline("a slow question")
    llm.wait_for_requests(4, timeout=30)
    child.sendintr()
    child.expect("interrupted")

    llm.push(Reply(text="still here after Ctrl-C"))
    child.sendline("are you there?")
    child.expect("still here after Ctrl-C")
    # the interrupted question stays in the transcript as a turn of its own
    sent = [(m["role"], m["content"]) for m in llm.requests[-1].body["messages"][-3:]]
    assert sent == [("user", "a slow question"), ("assistant", INTERRUPTED_NOTE),
                    ("user", "are you there?")]

    llm.push(Reply(text="a retried answer"))
    child.sendline("/retry")
    child.expect("retrying: are you there")
    child.expect("a retried answer")
    assert llm.requests[-1].body["messages"][-1]["content"] == "are you there?"
    child.sendline("/undo")
    child.expect("undone the last exchange")
    child.sendline("/help")
    child.expect("/retry")
    child.sendline("/usage")
    child.expect(r"tokens: 50 in, 25 out")  # every answered call, /retry and /undo too
    child.sendline("/exit")
    child.expect(r"session ([0-9a-f]{32}) — resume with `hermes chat --resume ([0-9a-f]{32})`")
    session_id = child.match.group(1)
    assert child.match.group(2) == session_id
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    db = sqlite3.connect(root / "state.db")
    assert db.execute("select id from sessions").fetchall() == [(session_id,)]
    db.close()


def test_a_chat_the_model_never_answered_leaves_no_session(root: Path, environ,
                                                          tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound but not listening: connections are refused
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        write_fake_provider(root, url)
        child = spawn_chat(environ, tmp_path)
        try:
            child.sendline("hello")
            child.expect(f"cannot reach the model endpoint {url} \\(connection refused\\)")
            child.expect("hermes doctor")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert "resume with" not in (child.before or "")
    db = sqlite3.connect(root / "state.db")
    assert db.execute("select count(*) from sessions").fetchone() == (0,)
    db.close()

