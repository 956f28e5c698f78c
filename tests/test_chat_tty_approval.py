"""Approval prompts in a real pseudo-terminal: what they say, and Ctrl-C at a prompt."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pexpect
import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

pytestmark = pytest.mark.both_modes  # in-process and through the warm server


@pytest.fixture
def chat(root: Path, environ, tmp_path: Path):
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        env = environ | {"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        child = pexpect.spawn(sys.executable, ["-m", "hermes", "chat"], env=env,
                              cwd=str(tmp_path), encoding="utf-8", timeout=60,
                              dimensions=(40, 200))
        try:
            child.expect("/help for commands")
            yield child, llm
        finally:
            child.close(force=True)


def test_ctrl_c_at_an_approval_prompt_denies_at_once(chat, tmp_path: Path) -> None:
    child, llm = chat
    target = tmp_path / "scratch2"
    target.mkdir(mode=0o755)
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod -R 777 {target}"})]))
    child.sendline("open up scratch2")
    child.expect(r"allow\? \[o/s/a/d\]")
    child.sendintr()
    child.expect(r"denied: cancelled")
    child.expect(r"\(interrupted")
    assert len(llm.requests) == 1  # the turn ended: the model was not called again
    # What is typed next is a chat message, not an answer to the dead prompt.
    llm.push(Reply(text="fresh turn"))
    child.sendline("o")
    child.expect("fresh turn")
    assert target.stat().st_mode & 0o777 == 0o755
    assert llm.requests[-1].last_user_text.endswith("o")
    tool_results = [r for r in llm.requests if r.tool_results]
    assert all("777" not in str(r.tool_results[0].content) or "refused" in
               str(r.tool_results[0].content) for r in tool_results)


def test_the_prompt_says_what_session_and_always_cover(chat, tmp_path: Path, root: Path) -> None:
    child, llm = chat
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod -R 777 {first}"})]),
             Reply(text="done a"),
             Reply(tool_calls=[ToolCall("terminal", {"command": f"chmod 777 {second}"})]),
             Reply(text="done b"))
    child.sendline("open a")
    child.expect(r"\[s\]ession  run it, and allow for the rest of this session: making files "
                 r"world-writable")
    child.expect(r"\[a\]lways   run it, and allow from now on in profile default: .*"
                 r"hermes approvals revoke chmod_777")
    child.expect(r"allow\? \[o/s/a/d\]")
    child.sendline("a")
    child.expect("done a")
    child.sendline("open b")  # same class, approved always: no prompt
    child.expect("done b")
    saved = json.loads((root / "approvals.json").read_text())["always"]
    assert [entry["key"] for entry in saved] == ["chmod_777"]
    assert second.stat().st_mode & 0o777 == 0o777
    child.sendline("/exit")
    child.expect(pexpect.EOF)
