"""`hermes acp` driven by an editor on the npm ACP SDK that editors still ship,
``@zed-industries/agent-client-protocol`` 0.4.5, whose schema wants ``rawInput`` and
``rawOutput`` to be JSON objects; every update is also checked against the current
SDK's schema (``@agentclientprotocol/sdk`` 2.4.0). Both come from the npm registry in
the test (skipped, with the reason, when npm or the registry cannot be had)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall

EDITOR = Path(__file__).parent / "acp_npm" / "editor.mjs"
PACKAGES = ["@zed-industries/agent-client-protocol@0.4.5", "@agentclientprotocol/sdk@2.4.0"]
CURRENT_SCHEMA = "node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js"


@pytest.fixture(scope="module")
def npm_editor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding both SDKs and the editor script."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed")
    directory = tmp_path_factory.mktemp("acp-npm")
    (directory / "package.json").write_text('{"private": true, "type": "module"}\n')
    try:
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save",
                               "--loglevel=error", *PACKAGES], cwd=directory,
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.skip("npm install timed out (no registry?)")
    if proc.returncode != 0:
        pytest.skip(f"npm install {' '.join(PACKAGES)} failed (offline?): "
                    f"{proc.stderr.strip().splitlines()[-1:]}")
    shutil.copy(EDITOR, directory / EDITOR.name)
    return directory


def test_tool_results_are_accepted_by_the_sdk_editors_ship(npm_editor: Path, root: Path,
                                                          environ: dict[str, str],
                                                          tmp_path: Path) -> None:
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "pwd"}, id="call_pwd")]),
                 Reply(text="You are in the project."))
        proc = subprocess.run(["node", str(npm_editor / EDITOR.name), sys.executable,
                               str(tmp_path), str(npm_editor / CURRENT_SCHEMA)],
                              env=environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["stopReason"] == "end_turn"
    assert seen["refused"] == [], seen["refused"]
    kinds = [item["params"]["update"]["sessionUpdate"] for item in seen["accepted"]]
    assert kinds[:2] == ["tool_call", "tool_call_update"] and kinds[-1] == "agent_message_chunk"
    finished = seen["accepted"][1]["params"]["update"]
    assert finished["status"] == "completed" and isinstance(finished["rawOutput"], dict)
    assert str(tmp_path) in json.dumps(finished["rawOutput"])
    assert {item["current"] for item in seen["accepted"]} == {"valid"}
