"""The interactive chat through a real pseudo-terminal: typing, streaming, approval,
Ctrl-C, slash commands, /exit."""

from __future__ import annotations

import socket
import sqlite3
import sys
from pathlib import Path

import pexpect
import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

pytestmark = pytest.mark.both_modes  # in-process and through the warm server


def spawn_chat(environ: dict[str, str], cwd: Path) -> pexpect.spawn:
    env = environ | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
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


def test_interactive_session(chat, tmp_path: Path) -> None:
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
    # the interrupted question stays in the transcript, merged with the next one
    assert llm.requests[-1].last_user_text == "a slow question\n\nare you there?"

    child.sendline("/help")
    child.expect("/retry")
    child.sendline("/usage")
    child.expect("tokens: ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


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
