"""The newcomer's MCP repairs (issue 27): a server that dies at start is explained by its
stderr; a server that never answers is backed off by the warm server and reported by
`mcp list` and `doctor`; an interrupt cancels a running MCP call; task-only tools are not
offered; images a tool returns reach the model."""

from __future__ import annotations

import base64
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ok, wait_until, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.transcript import last_turn_start
from mcp_doors_server import PNG
from mcp_support import starts, write_profile
from plugin_support import write_plugin
from test_doctor import table

DOORS = Path(__file__).resolve().parent / "mcp_doors_server.py"


def test_a_server_that_dies_at_start_shows_the_end_of_its_stderr(hermes, root: Path) -> None:
    ok(hermes("mcp", "add", "dies", "--", sys.executable, "-c",
              "import mcp.server.fastmcp_gone"))
    result = hermes("mcp", "test", "dies")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: MCP server dies (") and "failed: " in lines[0]
    assert lines[1] == "  its stderr ended with:"
    assert lines[-1] == "    ModuleNotFoundError: No module named 'mcp.server.fastmcp_gone'"


SILENT = ("import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n')\n"
          "if not os.path.exists(sys.argv[2]): time.sleep(60)\n"
          "os.execv(sys.executable, [sys.executable, *sys.argv[3:]])")
"""A stdio server that records its start, then never answers until the file ``argv[2]``
exists; from then on it is the server ``argv[3:]``."""


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda request: Reply(text="fine"), strict=False) as fake:
        yield fake


def warm_hermes(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``hermes ARGS`` through the warm server (started by the first such command)."""
    warm = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=warm, text=True,
                          capture_output=True, timeout=120)


def ok_run(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_warm_server_backs_off_a_server_that_never_answers(
        environ, root: Path, llm: FakeLLM, tmp_path: Path) -> None:
    started, fixed = tmp_path / "starts", tmp_path / "fixed"
    silent = {"command": sys.executable, "args": ["-S", "-c", SILENT, str(started), str(fixed),
                                                  str(DOORS)], "connect_timeout": 3}
    write_profile(root, llm.openai_base_url, {"silent": silent})
    first = warm_hermes(environ, "-z", "hello")
    assert first.returncode == 0 and first.stdout == "fine\n", first.stderr
    began = time.monotonic()
    second = warm_hermes(environ, "-z", "again")
    assert second.returncode == 0 and second.stdout == "fine\n", second.stderr
    assert time.monotonic() - began < 2  # not its connect_timeout again
    assert len(starts(started)) == 1
    assert "warning: MCP server silent skipped: did not start within 3 s (failed 1× in a " \
           "row; tried again in " in second.stderr
    listed = warm_hermes(environ, "mcp", "list").stdout
    assert re.search(r"\nsilent: failing \(1 failed start, last \d\d:\d\d:\d\d\): did not "
                     r"start within 3 s; next retry in \d+ s\n", listed), listed
    doctor = warm_hermes(environ, "doctor", "--offline")
    assert doctor.returncode == 1
    status, detail, fix = table(doctor)["mcp silent"]
    assert status == "fail" and detail.startswith("warm server: failing (1 failed start")
    assert "hermes mcp test silent" in fix
    assert len(starts(started)) == 1  # doctor left it to its retry time
    fixed.touch()  # `mcp test` sees it start: the warm server tries it at its next use
    write_profile(root, llm.openai_base_url, {"silent": silent | {"connect_timeout": 60}})
    assert ok_run(warm_hermes(environ, "mcp", "test", "silent")).startswith("silent: stdio")
    third = warm_hermes(environ, "-z", "and again")
    assert third.returncode == 0 and "warning" not in third.stderr, third.stderr
    assert len(starts(started)) == 3
    assert "\nsilent: task_only not offered: it runs only as an MCP task " \
           "(execution.taskSupport: required)\n" in warm_hermes(environ, "mcp", "list").stdout


def test_doctor_reports_a_failing_server_a_broken_plugin_and_an_unaccepted_hook(
        hermes, root: Path) -> None:
    write_fake_provider(root, "http://127.0.0.1:9/v1")
    write_plugin(root, "broken", "raise ImportError('needs the spotify SDK')\n")
    config = yaml.safe_load((root / "config.yaml").read_text())
    config |= {"mcp_servers": {"dies": {"command": sys.executable,
                                        "args": ["-c", "import mcp.server.fastmcp_gone"]}},
               "plugins": {"enabled": ["broken"]},
               "hooks": {"pre_tool_call": [{"command": "/usr/bin/true"}]}}
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    result = hermes("doctor", "--offline")
    assert result.exit_code == 1, result.stdout
    rows = table(result)
    status, detail, fix = rows["mcp dies"]
    assert status == "fail" and "MCPError" in detail
    assert "No module named 'mcp.server.fastmcp_gone'" in detail
    assert "hermes mcp test dies" in fix
    status, detail, fix = rows["plugin broken"]
    assert (status, detail) == ("fail", "ImportError: needs the spotify SDK")
    assert "hermes plugins disable broken" in fix
    status, detail, fix = rows["shell hook"]
    assert status == "warn" and detail == "pre_tool_call: /usr/bin/true is not accepted " \
                                          "and does not run"
    assert "hermes hooks accept" in fix


def doors_server(marks: Path, **settings: Any) -> dict[str, Any]:
    """``mcp_servers.doors``: the issue-27 sample server over stdio."""
    return {"command": sys.executable, "args": [str(DOORS)],
            "env": {"DOORS_MARKS": str(marks)}, **settings}


@pytest.mark.both_modes
def test_ctrl_c_cancels_a_running_mcp_call_at_once(environ, root: Path, tmp_path: Path
                                                   ) -> None:
    marks = tmp_path / "marks"
    with FakeLLM() as llm:
        llm.push(Reply(tool_calls=[ToolCall("mcp_doors_wait", {"seconds": 60})]))
        write_profile(root, llm.openai_base_url, {"doors": doors_server(marks)})
        proc = subprocess.Popen([sys.executable, "-m", "hermes", "-z", "wait a minute"],
                                env=environ, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        wait_until(lambda: (marks.exists() and "started" in marks.read_text())
                   or proc.poll() is not None, timeout=60, what="the MCP call to start")
        assert proc.poll() is None, (proc.communicate(), llm.requests[-1].tool_results)
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        took = time.monotonic() - interrupted
    assert proc.returncode == 130, err
    assert took < 3, f"the interrupted turn took {took:.1f} s to end"
    wait_until(lambda: "cancelled" in marks.read_text(), timeout=10,
               what="the server to cancel the call")
    assert len(llm.requests) == 1


def test_task_only_tools_are_not_offered_and_images_reach_the_model(
        hermes, root: Path, tmp_path: Path) -> None:
    with FakeLLM() as llm:
        llm.push(Reply(tool_calls=[ToolCall("mcp_doors_picture", {})]), Reply(text="a dot"))
        write_profile(root, llm.openai_base_url, {"doors": doors_server(tmp_path / "marks")})
        assert ok(hermes("-z", "show me the picture")) == "a dot\n"
        tested = ok(hermes("mcp", "test", "doors")).splitlines()
    offered = {tool["function"]["name"] for tool in llm.requests[0].body["tools"]}
    assert {"mcp_doors_wait", "mcp_doors_picture"} <= offered
    assert "mcp_doors_task_only" not in offered
    assert "  mcp_doors_task_only  (not offered: it runs only as an MCP task " \
           "(execution.taskSupport: required))  Runs only as a task (it says so in " \
           "execution.taskSupport)." in tested
    *_, tool, shown = llm.requests[1].body["messages"]
    assert tool["role"] == "tool" and "a red dot\n[image: image/png, 70 bytes, shown after " \
        "the tool results]" in json.loads(tool["content"])["content"]
    assert shown["role"] == "user"
    note, image = shown["content"]
    assert note["text"].startswith("[Images returned by mcp_doors_picture above: outside")
    assert image == {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}
    sent = llm.requests[1].body["messages"]  # /undo takes back the user's turn, not that
    assert sent[last_turn_start(sent) or 0]["content"] == "show me the picture"
