"""The README's MCP section as written, in a real shell, against the fake LLM: a
filesystem server added with `hermes mcp add ... -- npx ...` (an `npx` shim on PATH
starts the SDK-written stand-in, tests/mcp_files_server.py), tested, its tool called by
the model, an HTTP server added with a secret by reference, listed and removed; then the
client blocks: the stdio command Claude Code and Cursor start, and `hermes mcp serve
--http` with the exported key, both driven by the SDK's own client."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from readme_support import HERMES_BIN, code_blocks, commands, run, section

FILES_SERVER = Path(__file__).resolve().parent / "mcp_files_server.py"
NPX = """#!/bin/sh
# the README's filesystem server, offline: the same tools, from tests/mcp_files_server.py
[ "$1 $2" = "-y @modelcontextprotocol/server-filesystem" ] || exit 9
shift 2
exec {python} {server} "$@"
"""


def blocks(kind: str) -> list[str]:
    return code_blocks(section("## MCP"), kind)


def respond(request: RecordedRequest) -> Reply:
    if not request.tool_results:
        return Reply(tool_calls=[ToolCall("mcp_notes_read_text_file", {"path": "todo.md"})])
    fenced = json.loads(request.tool_results[-1].content)["content"]
    return Reply(text="Your list: " + re.sub(r"<[^>]+>", "", fenced).strip())


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=respond, strict=False) as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


@pytest.fixture
def env(environ: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """`hermes` and the `npx` shim on PATH."""
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "npx").write_text(NPX.format(python=sys.executable, server=FILES_SERVER))
    (shims / "npx").chmod(0o755)
    return environ | {"PATH": os.pathsep.join([str(shims), str(HERMES_BIN), environ["PATH"]])}


def shell(env: dict[str, str], script: str, cwd: Path) -> str:
    return run(env, script, cwd).stdout


def test_connecting_servers_runs_as_written(env: dict[str, str], root: Path, llm: FakeLLM,
                                            tmp_path: Path) -> None:
    *lines, remove = commands(blocks("sh")[0])
    notes, add, tested, answer, add_http, secret, listed = (
        shell(env, line, tmp_path) for line in lines)
    home = Path(env["HOME"])
    assert notes == "" and (home / "notes" / "todo.md").exists()
    assert add.startswith("added MCP server notes to ")
    assert "  mcp_notes_read_text_file  Read a text file." in tested.splitlines()
    assert "  mcp_notes_write_file  (filtered out)  Write a text file." in tested.splitlines()
    assert answer == "Your list: - renew the TLS certificate\n"
    offered = {t["function"]["name"]: t["function"] for t in llm.requests[0].body["tools"]}
    assert "mcp_notes_write_file" not in offered
    assert offered["mcp_notes_read_text_file"]["parameters"]["required"] == ["path"]
    assert add_http.startswith("added MCP server github to ") and secret
    config = yaml.safe_load((root / "config.yaml").read_text())
    assert config["mcp_servers"]["github"]["headers"] == {
        "Authorization": "Bearer ${secret:GITHUB_TOKEN}"}
    assert "ghp_your_token" not in (root / "config.yaml").read_text()
    rows = {line.split()[0]: line.split()[1:] for line in listed.splitlines()[1:3]}
    assert rows["notes"][:4] == ["enabled", "stdio", "not", "write_file"]
    assert rows["github"] == ["enabled", "http", "all", "https://api.githubcopilot.com/mcp/"]
    assert shell(env, remove, tmp_path).startswith("removed MCP server github")
    assert list(yaml.safe_load((root / "config.yaml").read_text())["mcp_servers"]) == ["notes"]


def client_blocks() -> tuple[dict[str, Any], dict[str, Any]]:
    stdio, http = (json.loads(block)["mcpServers"]["hermes"] for block in blocks("json"))
    return stdio, http


async def ask_through(transport: Any) -> dict[str, Any]:
    from mcp import Client

    async with Client(transport, mode="legacy") as client:
        assert "ask" in {tool.name for tool in (await client.list_tools()).tools}
        asked = (await client.call_tool("ask", {"message": "hello"})).structured_content
        read = await client.call_tool("session_read", {"session_id": asked["session_id"]})
        return {"answer": asked["answer"], "read": read.structured_content}


def test_the_stdio_client_block_starts_hermes(env: dict[str, str], llm: FakeLLM,
                                              tmp_path: Path) -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    stdio, _ = client_blocks()
    assert stdio["command"] == "hermes"
    llm.push(Reply(text="hi from hermes"))
    parameters = StdioServerParameters(command=stdio["command"], args=stdio["args"], env=env)
    # The server's stderr to a file: sys.stderr may be a stand-in without a descriptor
    # (a CliRunner of an earlier test), which the SDK's default would hand to the process.
    with (tmp_path / "serve.log").open("w") as errlog:
        got = anyio.run(ask_through, stdio_client(parameters, errlog=errlog))
    assert got["answer"] == "hi from hermes"
    assert got["read"]["messages"][-1]["content"] == "hi from hermes"


def test_the_http_client_block_reaches_hermes_mcp_serve_http(
        env: dict[str, str], root: Path, llm: FakeLLM, tmp_path: Path) -> None:
    export, config_set, serve = commands(blocks("sh")[1])
    said = shell(env, f"{export}\n{config_set}\necho \"$HERMES_MCP_KEY\"", tmp_path)
    confirmation, key = said.strip().splitlines()
    assert confirmation.startswith("MCP_SERVER_KEY = <redacted>") and key not in confirmation
    assert len(key) == 48 and f"MCP_SERVER_KEY={key}" in (root / ".env").read_text()
    _, http = client_blocks()
    headers = {k: v.replace("${HERMES_MCP_KEY}", key) for k, v in http["headers"].items()}
    llm.push(Reply(text="hi over http"))
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(["bash", "-ec", f"exec {serve}"], env=env, cwd=tmp_path,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(lambda: http["url"] in log.read_text() or proc.poll() is not None,
                   timeout=120, what="hermes mcp serve --http to listen")
        assert proc.poll() is None, log.read_text()
        got = anyio.run(ask_over_http, http["url"], headers)
    finally:
        proc.terminate()
        proc.wait(60)
    assert got["answer"] == "hi over http"
    assert got["read"]["session"]["source"] == "mcp"


async def ask_over_http(url: str, headers: dict[str, str]) -> dict[str, Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        return await ask_through(streamable_http_client(url, http_client=http))
