"""The ``smart`` approval judge: a model's verdict through litellm's real HTTP stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.approval_judge import ModelJudge, parse_verdict
from hermes.tools.context import ApprovalRequest
from hermes.tools.danger import detect_dangers
from test_models import client


def request(command: str) -> ApprovalRequest:
    return ApprovalRequest(command, tuple(detect_dangers(command)))


@pytest.mark.parametrize(("text", "approve"), [
    ("APPROVE: the user asked for it", True), ("**APPROVE**: fine", True),
    ("DENY: deletes the home", False), ("Sure, go ahead", False), ("", False),
])
def test_only_a_clear_approve_approves(text: str, approve: bool) -> None:
    assert parse_verdict(text).approve is approve


def test_the_judge_sees_the_request_command_and_reason() -> None:
    with FakeLLM() as llm:
        llm.push(Reply(text="APPROVE: cleaning the build output was requested"))
        verdict = ModelJudge(client(llm), timeout=10)(request("rm -rf build"), "clean the build")
        assert verdict.approve and verdict.reason == "cleaning the build output was requested"
        asked = llm.requests[0].last_user_text or ""
        assert "clean the build" in asked and "rm -rf build" in asked and "rm -r" in asked


def test_a_slow_or_failing_judge_does_not_approve() -> None:
    with FakeLLM() as llm:
        llm.push(Reply(text="APPROVE: too late", delay=5))
        verdict = ModelJudge(client(llm), timeout=0.5)(request("rm -rf build"), "clean")
        assert not verdict.approve and "no verdict within 0.5 s" in verdict.reason


def test_smart_mode_end_to_end(hermes_subprocess, root: Path, tmp_path: Path) -> None:
    victim = tmp_path / "build"
    victim.mkdir()
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {victim}"})]),
                 Reply(text="APPROVE: the user asked to remove the build directory"),
                 Reply(text="Removed."))
        # In the working directory: the local sandbox lets commands write there, while
        # the /tmp they see is a private one (tmp_path's parent is not in it).
        proc = hermes_subprocess("-z", "remove the build directory", "approvals.mode=smart",
                                 cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "Removed.\n" and not victim.exists()
        assert "You review shell commands" in str(llm.requests[1].body)
    log = (root / "logs" / "approvals.jsonl").read_text()
    assert '"by": "judge"' in log and "remove the build directory" in log
