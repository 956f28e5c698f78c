"""Running MCP servers: ``Servers`` keeps connections on one asyncio loop (keyed by
what they are, so the broker shares one between the commands that configure it alike),
and ``McpPool`` runs such a loop in a thread of this runtime.

A server whose connection broke (it exited) is opened again on its next call; the call
that found it broken is not repeated, since it may have had effects.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any, TextIO

from hermes.mcp.base import CallResult, Listing, McpClient
from hermes.mcp.connection import Connection, describe
from hermes.mcp.spec import ServerSpec

STOP_WAIT = 15.0
"""Seconds stopping every server may take before the pool's loop is abandoned."""


class Servers:
    """Connections by fingerprint, on the running loop."""

    def __init__(self, log: logging.Logger):
        self.log = log
        self._live: dict[str, Connection] = {}
        self._opening: dict[str, asyncio.Task[Listing]] = {}

    async def open(self, spec: ServerSpec) -> Listing:
        """The server's tools, connecting first unless it is open; never raises."""
        key = spec.fingerprint
        if key not in self._opening or self._broken(key) or self._failed(key):
            self._opening[key] = asyncio.create_task(self._connect(spec))
        return await asyncio.shield(self._opening[key])

    async def call(self, spec: ServerSpec, tool: str, arguments: dict[str, Any]) -> CallResult:
        connection = self._live.get(spec.fingerprint)
        if connection is None or connection.broken:
            listing = await self.open(spec)
            connection = self._live.get(spec.fingerprint)
            if listing.error is not None or connection is None:
                return CallResult.failed(f"MCP server {spec.name} is not available",
                                         listing.error or "")
        result = await connection.call(tool, arguments)
        if connection.broken:
            self.log.warning(f"mcp server {spec.name} went away; it starts again at its next "
                             f"call: {result.failure}")
        return result

    async def close_all(self) -> None:
        """Stop every server, those still starting included (a runtime that failed to
        start closes while they connect: their tasks must not outlive the loop)."""
        starting = [task for task in self._opening.values() if not task.done()]
        for task in starting:
            task.cancel()
        await asyncio.gather(*starting, return_exceptions=True)
        connections, self._live = list(self._live.values()), {}
        self._opening.clear()
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

    def _broken(self, key: str) -> bool:
        connection = self._live.get(key)
        return connection is not None and connection.broken

    def _failed(self, key: str) -> bool:
        """It could not start last time (tried again: it may have been passing)."""
        opening = self._opening[key]
        return opening.done() and opening.result().error is not None

    async def _connect(self, spec: ServerSpec) -> Listing:
        started = time.monotonic()
        old = self._live.pop(spec.fingerprint, None)
        if old is not None:
            await old.close()
        connection = Connection(spec, lambda name: stderr_pipe(name, self.log))
        try:
            tools = await connection.open()
        except BaseException as exc:  # noqa: BLE001 - a failing server is reported, skipped
            await connection.close()
            error = f"did not start within {spec.connect_timeout:g} s" \
                if isinstance(exc, TimeoutError) else describe(exc)
            self.log.warning(f"mcp server {spec.name} ({spec.describe()}) failed: {error}")
            return Listing(spec.name, error=error, seconds=time.monotonic() - started)
        self._live[spec.fingerprint] = connection
        self.log.info(f"mcp server {spec.name} started: {len(tools)} tools")
        return Listing(spec.name, tuple(tools), seconds=time.monotonic() - started)


def stderr_pipe(server: str, log: logging.Logger) -> TextIO:
    """A file for a stdio server's stderr: each line reaches ``log`` (redacted there)
    from a reader thread, until the server and we have both closed it."""
    read_fd, write_fd = os.pipe()

    def drain() -> None:
        with open(read_fd, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if line.strip():
                    log.info(f"mcp server {server} stderr: {line.rstrip()}")

    threading.Thread(target=drain, name=f"mcp-{server}-stderr", daemon=True).start()
    return open(write_fd, "w", encoding="utf-8")  # noqa: SIM115 - the connection closes it


class McpPool(McpClient):
    """This runtime's servers, on an event loop in a thread of its own."""

    def __init__(self, log: logging.Logger):
        self._servers = Servers(log)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-loop",
                                        daemon=True)
        self._started: list[concurrent.futures.Future[Listing]] = []

    def start(self, specs: Sequence[ServerSpec]) -> None:
        if not self._thread.is_alive():
            self._thread.start()
        self._started = [self._submit(self._servers.open(spec)) for spec in specs]

    def listings(self) -> list[Listing]:
        return [future.result() for future in self._started]

    def call(self, spec: ServerSpec, tool: str, arguments: dict[str, Any]) -> CallResult:
        return self._submit(self._servers.call(spec, tool, arguments)).result()

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        with contextlib.suppress(concurrent.futures.TimeoutError):
            self._submit(self._servers.close_all()).result(STOP_WAIT)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_WAIT)
        if not self._thread.is_alive():
            self._loop.close()

    def _submit(self, work: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(work, self._loop)
