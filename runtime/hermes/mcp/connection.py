"""One MCP server held open through the SDK's ``Client``, on an asyncio loop.

The connection lives in a task of its own: the SDK's transports are anyio context
managers that must be entered and left by the same task, so ``open`` starts that task
and waits for the server's tool listing, and ``close`` tells it to leave. Calls run in
any task of the same loop. A stdio server's stderr goes through ``errlog`` (the pool
logs it, redacted), never to the user's terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any, TextIO

from hermes import __version__
from hermes.mcp.base import CallResult, ToolInfo
from hermes.mcp.spec import ServerSpec
from hermes.tools.fence import label

HANDSHAKE = "legacy"
"""The SDK's ``initialize`` handshake (protocol 2025-11-25), which servers of every
protocol era answer. The newer per-request protocol (2026-07-28) cost 9 ms per call
against 3.7 ms for this at a load of 7 on 2 cores (200 calls, mcp 2.3.0 at both ends)."""
CONNECTION_CLOSED = -32000
"""The SDK's error code for a connection that went away (the server exited)."""
MAX_PAGES = 100
"""Pages of a tool listing read at most (a paginator that never ends cannot hang)."""
CLOSE_WAIT = 10.0
"""Seconds a closing connection may take before its task is cancelled."""

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Image types the providers' APIs take; others are named, not shown."""

ErrLog = Callable[[str], TextIO]
"""Gives the file a stdio server's stderr goes to, by server name."""


class Connection:
    """One server: ``open`` (its tools), ``call``, ``close``."""

    def __init__(self, spec: ServerSpec, errlog: ErrLog):
        self.spec = spec
        self.broken = False
        """True once the server went away; the next call opens it again."""
        self._errlog = errlog
        self._client: Any = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> list[ToolInfo]:
        """Connect and list the tools within ``connect_timeout`` (else ``TimeoutError``,
        the connection given up); raises what the SDK or the server raised."""
        opened: asyncio.Future[list[ToolInfo]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(opened), name=f"mcp-{self.spec.name}")
        try:
            async with asyncio.timeout(self.spec.connect_timeout):
                return await asyncio.shield(opened)
        except TimeoutError:
            # A server that never answers the handshake would not see a polite close
            # either: cancel its task, whose transport then ends the process.
            await self._cancel()
            raise

    async def _cancel(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def close(self) -> None:
        """Leave politely once open; a connection still in its handshake is cancelled
        (as at its timeout), which ends the server's process."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self._client is None:
            await self._cancel()
            return
        done, _ = await asyncio.wait({task}, timeout=CLOSE_WAIT)
        if not done:
            await self._cancel()

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallResult:
        """The tool's result; what failed (the server's error, a timeout, the server
        gone) as an error result."""
        from mcp import MCPError

        timeout, name = self.spec.timeout, label(tool)  # the server named its tool
        try:
            async with asyncio.timeout(timeout):  # no task of its own, unlike wait_for
                result = await self._client.call_tool(tool, arguments)
        except TimeoutError:
            return CallResult.failed(f"{name} did not answer within {timeout:g} s "
                                     f"(mcp_servers.{self.spec.name}.timeout)")
        except MCPError as exc:
            self.broken = exc.code == CONNECTION_CLOSED
            return CallResult.failed(f"{name} failed: JSON-RPC error {exc.code}", exc.message)
        except Exception as exc:  # noqa: BLE001 - the transport's failures go to the model
            self.broken = True
            return CallResult.failed(f"{name} failed: {type(exc).__name__}", describe(exc))
        return result_of(result)

    async def _hold(self, opened: asyncio.Future[list[ToolInfo]]) -> None:
        try:
            async with AsyncExitStack() as stack:
                self._client = await stack.enter_async_context(self._new_client(stack))
                opened.set_result(await list_tools(self._client))
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to open(), or the server is gone
            self.broken = True
            if not opened.done():
                opened.set_exception(exc)

    def _new_client(self, stack: AsyncExitStack) -> Any:
        from mcp import Client
        from mcp.types import Implementation

        return Client(self._transport(stack), mode=HANDSHAKE, cache=None,
                      client_info=Implementation(name="hermes", version=__version__))

    def _transport(self, stack: AsyncExitStack) -> Any:
        spec = self.spec
        if spec.command is not None:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            parameters = StdioServerParameters(command=spec.command, args=list(spec.args),
                                               env=dict(spec.env), cwd=spec.cwd)
            return stdio_client(parameters, errlog=stack.enter_context(
                self._errlog(spec.name)))
        import httpx2  # the HTTP client the SDK's streamable HTTP transport takes
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=dict(spec.headers),
                                  timeout=httpx2.Timeout(spec.connect_timeout, read=300))
        stack.push_async_callback(http.aclose)
        return streamable_http_client(str(spec.url), http_client=http)


async def list_tools(client: Any) -> list[ToolInfo]:
    tools: list[ToolInfo] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [ToolInfo(t.name, t.description or "", dict(t.input_schema or {}),
                           _task_only(t)) for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _task_only(tool: Any) -> bool:
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) == "required"


def result_of(result: Any) -> CallResult:
    """A ``CallToolResult`` as text (text parts as they are, other parts named) and its
    images (for the model to see)."""
    parts = [_part_text(part) for part in result.content]
    structured = result.structured_content
    if not parts and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False, default=str)]
    images = tuple((str(part.mime_type), str(part.data)) for part in result.content
                   if getattr(part, "type", "") == "image" and part.mime_type in IMAGE_TYPES)
    return CallResult("\n".join(parts), bool(result.is_error), structured, images=images)


def _part_text(part: Any) -> str:
    kind = getattr(part, "type", "")
    if kind == "text":
        return str(part.text)
    if kind == "image" and part.mime_type in IMAGE_TYPES:
        return f"[image: {part.mime_type}, {_size(part.data)} bytes, shown after the tool " \
               "results]"
    if kind in ("image", "audio"):
        return f"[{kind}: {part.mime_type}, {_size(part.data)} bytes, not shown]"
    if kind == "resource":
        text = getattr(part.resource, "text", None)
        return str(text) if text is not None else f"[binary resource {part.resource.uri}]"
    if kind == "resource_link":
        return f"[resource {part.uri}]"
    return f"[{kind or type(part).__name__} content, not shown]"


def _size(data: str) -> int:
    """Bytes of base64 ``data``."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def describe(exc: BaseException) -> str:
    """One line for what failed, out of the task groups' exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
