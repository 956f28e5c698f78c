"""The MCP client in a real runtime, litellm against the fake LLM: an MCP server written
with the official SDK, over stdio and over streamable HTTP, its tools called by the
agent (with their JSON schemas sent to the model), include/exclude, a call's timeout, a
failing or hanging server skipped while the others work, results fenced as untrusted
and redacted, a crashed server started again, and servers stopping with the runtime."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakellm import FakeLLM, Reply, ToolCall
from hermes.agent.factory import Interaction
from mcp_support import (
    http_sample,
    runtime_of,
    starts,
    stdio_sample,
    wait_gone,
    write_profile,
)

HOW = Interaction()
SECRET = "sample-token-8f3a9c2b7d"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def content(result: object) -> dict[str, object]:
    return json.loads(result.content)  # type: ignore[attr-defined]


def fenced_text(data: dict[str, object]) -> str:
    """The server's text inside the fence."""
    body = str(data["content"])
    assert body.startswith('<mcp-result server="sample"') and body.endswith("</mcp-result>")
    return body.split("\n", 1)[1].rsplit("\n", 1)[0]


def test_stdio_tools_reach_the_model_with_their_schemas_and_results_are_fenced(
        root: Path, environ, llm, tmp_path: Path) -> None:
    started = tmp_path / "starts"
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(
        started, tools={"exclude": ["nap"]})})
    llm.push(Reply(tool_calls=[ToolCall("mcp_sample_add", {"a": 2, "b": 40}),
                               ToolCall("mcp_sample_inject", {})]),
             Reply(text="42"))
    with runtime_of(root, environ) as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        assert agent.run_turn("what is 2 + 40?").text == "42"
        agent.close()
        server = starts(started)
        assert len(server) == 1
    first = llm.requests[0]
    tools = {t["function"]["name"]: t["function"] for t in first.body["tools"]}
    assert {"mcp_sample_add", "mcp_sample_echo", "mcp_sample_inject"} <= set(tools)
    assert "mcp_sample_nap" not in tools  # excluded
    add = tools["mcp_sample_add"]
    assert add["description"] == "[MCP sample] Add two integers."
    assert add["parameters"]["required"] == ["a", "b"]
    assert add["parameters"]["properties"]["a"]["type"] == "integer"
    added, injected = (json.loads(r.content) for r in llm.requests[1].tool_results)
    assert fenced_text(added) == "42"
    assert "outside content" in str(added["note"]) and "error" not in added
    # the server's text cannot close the fence early
    assert str(injected["content"]).count("</mcp-result>") == 1
    assert fenced_text(injected).startswith("&lt;/mcp-result>")
    wait_gone(server[0], "the stdio server to stop with the runtime")


def test_include_lists_the_only_tools_the_model_sees(root: Path, environ, llm,
                                                     capsys) -> None:
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(
        tools={"include": ["echo", "pid", "nonesuch"], "exclude": ["pid"]})})
    with runtime_of(root, environ) as runtime:
        names = [n for n in runtime.container.tools().names() if n.startswith("mcp_")]
    assert names == ["mcp_sample_echo"]
    warning = capsys.readouterr().err
    assert "mcp_servers.sample.tools.include names nonesuch, which the server does not " \
           "offer" in warning


def test_a_secret_in_a_result_is_redacted_and_the_server_gets_only_its_env(
        root: Path, environ, llm) -> None:
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(
        env={"SAMPLE_TOKEN": "${secret:SAMPLE_TOKEN}"})}, secrets={"SAMPLE_TOKEN": SECRET})
    llm.push(Reply(tool_calls=[ToolCall("mcp_sample_reveal", {}),
                               ToolCall("mcp_sample_environment", {})]), Reply(text="ok"))
    with runtime_of(root, environ | {"OTHER_API_KEY": "sk-other-0123456789abcdef"}) as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        agent.run_turn("tell me the token")
    revealed, seen = (json.loads(r.content) for r in llm.requests[1].tool_results)
    assert fenced_text(revealed) == "the token is <redacted>"  # the server had it
    assert SECRET not in json.dumps(llm.requests[1].body)
    names = fenced_text(seen).split()  # one content part per name
    assert "SAMPLE_TOKEN" in names and "HOME" in names and "PATH" in names
    assert not {"OTHER_API_KEY", "CUSTOM_API_KEY", "HERMES_NO_DAEMON"} & set(names)


def test_a_slow_call_times_out_and_the_server_keeps_working(root: Path, environ,
                                                           llm) -> None:
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(timeout=1)})
    llm.push(Reply(tool_calls=[ToolCall("mcp_sample_nap", {"seconds": 20})]),
             Reply(tool_calls=[ToolCall("mcp_sample_echo", {"text": "still here"})]),
             Reply(text="done"))
    with runtime_of(root, environ) as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        began = time.monotonic()
        assert agent.run_turn("nap").text == "done"
        assert time.monotonic() - began < 15
    napped = json.loads(llm.requests[1].tool_results[0].content)
    assert napped == {"error": "nap did not answer within 1 s (mcp_servers.sample.timeout)"}
    assert fenced_text(json.loads(llm.requests[2].tool_results[-1].content)) == "still here"


def test_failing_and_hanging_servers_are_skipped_and_reported(
        root: Path, environ, llm, capsys) -> None:
    write_profile(root, llm.openai_base_url, {
        "sample": stdio_sample(),
        "missing": {"command": "/nonexistent/mcp-server"},
        "silent": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"],
                   "connect_timeout": 2},
        "off": {"command": "/nonexistent/other", "enabled": False},
    })
    llm.push(Reply(tool_calls=[ToolCall("mcp_sample_echo", {"text": "hi"})]), Reply(text="ok"))
    began = time.monotonic()
    with runtime_of(root, environ) as runtime:
        names = runtime.container.tools().names()
        agent = runtime.container.agent_factory().new_session(HOW)
        assert agent.run_turn("echo hi").text == "ok"
    assert time.monotonic() - began < 40  # the hung server cost its timeout, once
    assert "mcp_sample_echo" in names
    assert not [n for n in names if n.startswith(("mcp_missing", "mcp_silent", "mcp_off"))]
    warnings = capsys.readouterr().err.splitlines()
    assert [w for w in warnings if "missing" in w] == [
        "warning: MCP server missing skipped: FileNotFoundError: [Errno 2] No such file or "
        "directory: '/nonexistent/mcp-server'"]
    assert "warning: MCP server silent skipped: did not start within 2 s" in warnings
    assert not [w for w in warnings if "off" in w.split()]
    log = (root / "logs" / "mcp.log").read_text()
    assert "mcp server silent" in log and "mcp server sample started: 12 tools" in log


def test_a_server_that_crashed_starts_again_at_its_next_call(root: Path, environ, llm,
                                                            tmp_path: Path) -> None:
    started = tmp_path / "starts"
    write_profile(root, llm.openai_base_url, {"sample": stdio_sample(started)})
    llm.push(Reply(tool_calls=[ToolCall("mcp_sample_crash", {})]),
             Reply(tool_calls=[ToolCall("mcp_sample_pid", {})]), Reply(text="back"))
    with runtime_of(root, environ) as runtime:
        agent = runtime.container.agent_factory().new_session(HOW)
        assert agent.run_turn("crash, then come back").text == "back"
        pids = starts(started)
    crashed = json.loads(llm.requests[1].tool_results[0].content)
    assert crashed["error"].startswith("crash failed: ")
    again = json.loads(llm.requests[2].tool_results[-1].content)
    assert len(pids) == 2 and fenced_text(again) == str(pids[1])
    wait_gone(pids[1], "the restarted server to stop with the runtime")


def test_an_http_server_with_a_bearer_header_from_dotenv(root: Path, environ, llm,
                                                        tmp_path: Path, capsys) -> None:
    with http_sample(tmp_path, token=SECRET) as url:
        write_profile(root, llm.openai_base_url, {
            "web": {"url": url, "headers": {"Authorization": "Bearer ${secret:WEB_TOKEN}"},
                    "tools": {"include": ["echo", "reveal"]}},
            "nokey": {"url": url}}, secrets={"WEB_TOKEN": SECRET})
        llm.push(Reply(tool_calls=[ToolCall("mcp_web_echo", {"text": "over http"})]),
                 Reply(text="ok"))
        with runtime_of(root, environ) as runtime:
            names = [n for n in runtime.container.tools().names() if n.startswith("mcp_")]
            agent = runtime.container.agent_factory().new_session(HOW)
            assert agent.run_turn("echo over http").text == "ok"
    assert names == ["mcp_web_echo", "mcp_web_reveal"]
    echoed = json.loads(llm.requests[1].tool_results[0].content)
    assert echoed["content"] == '<mcp-result server="web" tool="echo">\nover http\n' \
                                '</mcp-result>'
    err = capsys.readouterr().err
    assert "warning: MCP server nokey skipped: " in err and SECRET not in err
