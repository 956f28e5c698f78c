"""`hermes mcp serve` driven by the official SDK's own client, over stdio and over
streamable HTTP: the tools and their schemas, `ask` (the fake LLM answers) in a new and
then the same session, the session read back and found, an approval answered while its
`ask` waits, only the served profile's sessions, and the bearer key over HTTP."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import stdio

from conftest import refused, wait_until
from fakellm import FakeLLM, Reply, ToolCall
from mcp_support import write_profile

KEY = "mcp-key-0123456789abcdef"
TOOLS = ["approval_answer", "approvals_list", "ask", "session_read", "sessions_list",
         "sessions_search"]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@asynccontextmanager
async def stdio_client(environ: dict[str, str], *args: str) -> AsyncIterator[Any]:
    server = StdioServerParameters(command=sys.executable, args=["-m", "hermes", *args,
                                                                  "mcp", "serve"],
                                   env=environ)
    # Its stderr to a file, not sys.stderr: that may be a stand-in without a descriptor.
    with (Path(environ["HOME"]) / "serve-stdio.log").open("a") as errlog:
        async with Client(stdio.stdio_client(server, errlog=errlog), mode="legacy") as client:
            yield client


async def call(client: Any, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def run(test: Any) -> None:
    anyio.run(test)


def test_stdio_tools_ask_and_read_the_session_back(environ, root: Path, llm) -> None:
    write_profile(root, llm.openai_base_url, {})
    llm.push(Reply(text="Paris."), Reply(text="About 2.1 million."))

    async def session() -> None:
        async with stdio_client(environ) as client:
            listed = (await client.list_tools()).tools
            assert sorted(t.name for t in listed) == TOOLS
            ask = next(t for t in listed if t.name == "ask")
            assert ask.input_schema["required"] == ["message"]
            assert "session_id" in ask.input_schema["properties"]
            assert "Send a message to the Hermes agent" in ask.description
            first = await call(client, "ask", message="Capital of France?")
            assert first["answer"] == "Paris." and first["exit_reason"] == "completed"
            again = await call(client, "ask", message="How many people live there?",
                               session_id=first["session_id"])
            assert again["session_id"] == first["session_id"]
            read = await call(client, "session_read", session_id=first["session_id"][:8])
            assert [(m["role"], m["content"]) for m in read["messages"]] == [
                ("user", "Capital of France?"), ("assistant", "Paris."),
                ("user", "How many people live there?"), ("assistant", "About 2.1 million.")]
            assert read["session"]["source"] == "mcp"
            listed_sessions = (await call(client, "sessions_list"))["sessions"]
            assert [s["id"] for s in listed_sessions] == [first["session_id"]]
            hits = (await call(client, "sessions_search", query="France"))["hits"]
            assert hits[0]["session_id"] == first["session_id"]
            missing = await client.call_tool("session_read", {"session_id": "nope"})
            assert missing.is_error and 'no session matches "nope"' in \
                missing.content[0].text

    run(session)
    # the second turn carried the first: the model saw the conversation
    assert [m["content"] for m in llm.requests[1].body["messages"][1:]] == [
        "Capital of France?", "Paris.", "How many people live there?"]


def test_a_client_sees_only_the_profile_it_was_started_for(environ, root: Path,
                                                           llm) -> None:
    work = root / "profiles" / "work"
    write_profile(root, llm.openai_base_url, {})
    write_profile(work, llm.openai_base_url, {})
    llm.push(Reply(text="from default"), Reply(text="from work"))

    async def session() -> None:
        async with stdio_client(environ) as default:
            mine = await call(default, "ask", message="hello default")
        async with stdio_client(environ, "-p", "work") as client:
            theirs = await call(client, "ask", message="hello work")
            listed = (await call(client, "sessions_list"))["sessions"]
            assert [s["id"] for s in listed] == [theirs["session_id"]]
            other = await client.call_tool("session_read", {"session_id": mine["session_id"]})
            assert other.is_error and "no session matches" in other.content[0].text
            hits = (await call(client, "sessions_search", query="default"))["hits"]
            assert hits == []

    run(session)


def test_an_approval_is_answered_while_ask_waits(environ, root: Path, llm,
                                                 tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.mkdir()
    write_profile(root, llm.openai_base_url, {})
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {target}"})]),
             Reply(text="it was refused"))

    async def session() -> None:
        async with stdio_client(environ) as client, anyio.create_task_group() as tasks:
            answers: list[Any] = []

            async def ask() -> None:
                answers.append(await call(client, "ask", message="clean up"))

            tasks.start_soon(ask)
            with anyio.fail_after(120):
                while not (pending := (await call(client, "approvals_list"))["approvals"]):
                    await anyio.sleep(0.1)
            assert pending[0]["command"] == f"rm -rf {target}"
            assert "delete" in pending[0]["reason"] or "rm" in pending[0]["reason"]
            answered = await call(client, "approval_answer",
                                  approval_id=pending[0]["approval_id"], choice="deny")
            assert answered["command"] == f"rm -rf {target}"
            wrong = await client.call_tool("approval_answer", {
                "approval_id": pending[0]["approval_id"], "choice": "once"})
            assert wrong.is_error and "no open approval" in wrong.content[0].text
        assert answers[0]["answer"] == "it was refused"

    run(session)
    assert target.exists()
    refusal = json.loads(llm.requests[1].tool_results[0].content)
    assert "denied" in json.dumps(refusal) or "refused" in json.dumps(refusal)


@contextmanager
def http_server(environ: dict[str, str]) -> Iterator[str]:
    log = Path(environ["HOME"]) / "serve-http.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "hermes", "mcp", "serve", "--http",
                                 "--port", "0"], env=environ, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        found = wait_until(lambda: re.search(r"http://127\.0\.0\.1:\d+/mcp", log.read_text())
                           or proc.poll() is not None, timeout=120, what="the address")
        assert proc.poll() is None, log.read_text()
        yield found.group(0)  # type: ignore[union-attr]
        proc.terminate()
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_http_needs_the_bearer_key(environ, hermes, root: Path, llm) -> None:
    write_profile(root, llm.openai_base_url, {})
    refused(hermes("mcp", "serve", "--http"), "--http needs a bearer key",
            "hermes config set MCP_SERVER_KEY")
    (root / ".env").write_text((root / ".env").read_text() + "MCP_SERVER_KEY=short\n")
    refused(hermes("mcp", "serve", "--http"), "MCP_SERVER_KEY is shorter than 16")
    (root / ".env").write_text((root / ".env").read_text() + f"MCP_SERVER_KEY={KEY}\n")
    llm.push(Reply(text="over http"))
    with http_server(environ) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for headers in ({}, {"Authorization": "Bearer wrong-key-0123456789"},
                        {"Authorization": KEY}):
            denied = httpx.post(url, json=body, headers=headers, timeout=30)
            assert denied.status_code == 401 and "MCP_SERVER_KEY" in denied.text
            assert denied.headers["www-authenticate"] == "Bearer"

        async def session() -> None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"},
                                          timeout=60) as http, \
                    Client(streamable_http_client(url, http_client=http),
                           mode="legacy") as client:
                assert sorted(t.name for t in (await client.list_tools()).tools) == TOOLS
                answer = await call(client, "ask", message="hello over http")
                read = await call(client, "session_read", session_id=answer["session_id"])
                assert read["messages"][-1]["content"] == "over http"

        run(session)


def test_http_binds_loopback_by_default(environ, root: Path, llm) -> None:
    write_profile(root, llm.openai_base_url, {}, secrets={"MCP_SERVER_KEY": KEY})
    with http_server(environ) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                                   text=True).stdout.split()
        assert listening[3] == f"127.0.0.1:{port}"  # the local address
