"""MCP servers kept running between commands: one-shots through the warm server share
the servers its broker holds (started once, stopped with the server), the gateway keeps
them for all its turns, and in-process one-shots start and stop their own each time."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import stop_servers, wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import KEY, configure, gateway
from mcp_support import running, starts, stdio_sample, wait_gone, write_profile


def pid_then_answer(request: RecordedRequest) -> Reply:
    """Ask the sample server for its pid, then say it."""
    if not request.tool_results:
        return Reply(tool_calls=[ToolCall("mcp_sample_pid", {})])
    text = json.loads(request.tool_results[-1].content)["content"]
    return Reply(text="pid " + re.sub(r"<[^>]+>", "", text).strip())


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=pid_then_answer, strict=False) as fake:
        yield fake


def one_shot(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "hermes", "-z", "what is your pid?"],
                          env=env, text=True, capture_output=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_one_shots_through_the_warm_server_share_its_mcp_servers(
        environ, root: Path, llm, tmp_path: Path) -> None:
    started = tmp_path / "starts"
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(started)})
    warm = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    first, second = one_shot(warm), one_shot(warm)
    pids = starts(started)
    assert len(pids) == 1 and first == second == f"pid {pids[0]}"
    assert running(pids[0])  # kept between the commands
    server = int((root / "run" / "daemon.pid").read_text())
    sockets = list((root / "run").glob("mcp-*.sock"))
    assert [s.name for s in sockets] == [f"mcp-{server}.sock"]
    assert sockets[0].stat().st_mode & 0o777 == 0o600
    stop_servers(Path(environ["HOME"]))
    wait_gone(pids[0], "the MCP server to stop with the warm server")
    wait_until(lambda: not sockets[0].exists(), what="the broker's socket to go")


def test_in_process_one_shots_start_and_stop_their_own(environ, root: Path, llm,
                                                       tmp_path: Path) -> None:
    started = tmp_path / "starts"
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(started)})
    first, second = one_shot(environ), one_shot(environ)
    pids = starts(started)
    assert len(pids) == 2 and [first, second] == [f"pid {pid}" for pid in pids]
    assert not any(running(pid) for pid in pids)


def test_the_gateway_keeps_its_mcp_servers_between_turns(environ, root: Path, llm,
                                                        tmp_path: Path) -> None:
    started = tmp_path / "starts"
    configure(root, llm.openai_base_url, mcp_servers={"sample": stdio_sample(started)})
    with gateway(environ, root) as gw:
        answers = [httpx.post(f"{gw.url}/v1/chat/completions", timeout=120,
                              headers={"Authorization": f"Bearer {KEY}"},
                              json={"model": "default", "messages": [
                                  {"role": "user", "content": f"pid? ({n})"}]})
                   for n in range(2)]
        pids = starts(started)
        assert len(pids) == 1 and running(pids[0])
        for answer in answers:
            assert answer.status_code == 200, answer.text
            assert answer.json()["choices"][0]["message"]["content"] == f"pid {pids[0]}"
        gw.proc.send_signal(signal.SIGTERM)
        assert gw.proc.wait(60) == 0, gw.output()
    wait_gone(pids[0], "the MCP server to stop with the gateway")
