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
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from hermes.mcp.base import (
    CANCEL_EVERY,
    CallResult,
    Cancelled,
    Listing,
    McpClient,
    interrupted,
    never,
)
from hermes.mcp.connection import Connection, describe
from hermes.mcp.health import Health, after_failure, write_health
from hermes.mcp.spec import ServerSpec
from hermes.tools.fence import label

STOP_WAIT = 15.0
"""Seconds stopping every server may take before the pool's loop is abandoned."""
STDERR_LINES = 5
"""Last lines of a stdio server's stderr kept to explain a failed start."""
STDERR_WAIT = 1.0
"""Seconds a failed start waits for the rest of the server's stderr."""


class Servers:
    """Connections by fingerprint, on the running loop; a server that failed to start
    is tried again only once its retry time (``health``) has come."""

    def __init__(self, log: logging.Logger, health_path: Path | None = None):
        self.log = log
        self.health_path = health_path
        """Where the broker records each server's health for ``mcp list`` and doctor."""
        self._live: dict[str, Connection] = {}
        self._opening: dict[str, asyncio.Task[Listing]] = {}
        self._health: dict[str, tuple[str, Health]] = {}
        """By fingerprint: the server's name and its record."""

    async def open(self, spec: ServerSpec) -> Listing:
        """The server's tools, connecting first unless it is open; never raises. A
        failed server's last failure until its retry time."""
        key = spec.fingerprint
        known = key in self._opening and not self._broken(key) and not self._retry_due(key)
        if not known:
            self._opening[key] = asyncio.create_task(self._connect(spec))
        listing = await asyncio.shield(self._opening[key])
        health = self._health.get(key, ("", None))[1]
        if not known or listing.error is None or health is None or not health.retry_in():
            return listing
        return replace(listing, error=f"{listing.error} (failed {health.failures}× in a "
                                      f"row; tried again in {health.retry_in():.0f} s)")

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

    def forget_failure(self, name: str) -> None:
        """Try server ``name`` again at its next use (``hermes mcp test`` saw it start)."""
        for named, health in self._health.values():
            if named == name and health.state == "failing":
                health.next_retry = 0.0
        self._write_health()

    def _retry_due(self, key: str) -> bool:
        """It could not start last time and its retry time has come."""
        opening = self._opening[key]
        if not opening.done() or opening.result().error is None:
            return False
        health = self._health.get(key, ("", None))[1]
        return health is None or not health.retry_in()

    def _record(self, spec: ServerSpec, listing: Listing) -> None:
        now = time.time()
        previous = self._health.get(spec.fingerprint, ("", None))[1]
        health = Health("running", checked_at=now, task_only=[
            t.name for t in listing.tools if t.task_only]) if listing.error is None else \
            after_failure(previous, listing.error, listing.stderr, now)
        self._health[spec.fingerprint] = (spec.name, health)
        self._write_health()

    def _write_health(self) -> None:
        if self.health_path is None:
            return
        try:
            write_health(self.health_path, os.getpid(),
                         {name: record for name, record in self._health.values()})
        except OSError as exc:
            self.log.warning(f"mcp health not recorded in {self.health_path}: {exc}")

    async def _connect(self, spec: ServerSpec) -> Listing:
        listing = await self._start(spec)
        self._record(spec, listing)
        return listing

    async def _start(self, spec: ServerSpec) -> Listing:
        started = time.monotonic()
        old = self._live.pop(spec.fingerprint, None)
        if old is not None:
            await old.close()
        stderr = StderrTail(spec.name, self.log)
        connection = Connection(spec, stderr.pipe)
        try:
            tools = await connection.open()
        except BaseException as exc:  # noqa: BLE001 - a failing server is reported, skipped
            await connection.close()
            error = f"did not start within {spec.connect_timeout:g} s" \
                if isinstance(exc, TimeoutError) else describe(exc)
            self.log.warning(f"mcp server {spec.name} ({spec.describe()}) failed: {error}")
            return Listing(spec.name, error=error, seconds=time.monotonic() - started,
                           stderr=await stderr.last_lines())
        self._live[spec.fingerprint] = connection
        self.log.info(f"mcp server {spec.name} started: {len(tools)} tools")
        return Listing(spec.name, tuple(tools), seconds=time.monotonic() - started)


class StderrTail:
    """A stdio server's stderr: each line reaches ``log`` (redacted there) from a reader
    thread, and the last few are kept to say why a start failed."""

    def __init__(self, server: str, log: logging.Logger):
        self.server = server
        self.log = log
        self.lines: deque[str] = deque(maxlen=STDERR_LINES)
        self._drained = threading.Event()

    def pipe(self, _name: str) -> TextIO:
        """The file the server's stderr goes to (the connection closes it)."""
        read_fd, write_fd = os.pipe()
        threading.Thread(target=self._drain, args=(read_fd,), daemon=True,
                         name=f"mcp-{self.server}-stderr").start()
        return open(write_fd, "w", encoding="utf-8")  # noqa: SIM115 - the connection closes it

    async def last_lines(self) -> tuple[str, ...]:
        """The last lines, once the server and we have both closed the pipe (or after
        ``STDERR_WAIT``); none for a server that never started one."""
        deadline = time.monotonic() + STDERR_WAIT
        while not self._drained.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return tuple(self.lines)

    def _drain(self, read_fd: int) -> None:
        try:
            with open(read_fd, encoding="utf-8", errors="replace") as lines:
                for line in lines:
                    if line.strip():
                        self.lines.append(line.rstrip()[:500])
                        self.log.info(f"mcp server {self.server} stderr: {line.rstrip()}")
        finally:
            self._drained.set()


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

    def call(self, spec: ServerSpec, tool: str, arguments: dict[str, Any],
             cancelled: Cancelled = never) -> CallResult:
        future = self._submit(self._servers.call(spec, tool, arguments))
        while True:
            try:
                result: CallResult = future.result(CANCEL_EVERY)
                return result
            except concurrent.futures.TimeoutError:
                if cancelled():
                    future.cancel()  # the SDK tells the server (notifications/cancelled)
                    return interrupted(label(tool))

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
