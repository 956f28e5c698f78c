"""The warm server's MCP broker: one process per warm server that keeps the home's MCP
servers running between the commands the server runs.

The warm server forks a child per command, and a child's servers would die with it.
So the first command that needs MCP starts ``python -P -m hermes.mcp.broker HOME PID``
beside the server (``PID``), which holds the connections (``pool.Servers``, keyed by
what each server is, so commands configured alike share one) and answers on
``run/mcp-PID.sock`` (0600, same user only). It exits, stopping the servers, once that
warm server is gone. Messages are the server's frames (``daemon.wire``):
``{"op": "open", "specs": [...]}`` answers the listings, ``{"op": "call", "spec": ...,
"tool": ..., "arguments": ...}`` a call's result (closing the connection before it
answers cancels the call), ``{"op": "forget", "server": NAME}`` ends the wait before a
failed server's next try.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes import unix_socket
from hermes.daemon import wire
from hermes.home import Home
from hermes.mcp.base import (
    CANCEL_EVERY,
    CallResult,
    Cancelled,
    Listing,
    McpClient,
    interrupted,
    never,
)
from hermes.mcp.spec import ServerSpec
from hermes.python_child import NEUTRAL_CWD, python_argv, python_environ
from hermes.tools.fence import label

START_WAIT = 60.0
"""Seconds a command waits for a new broker's socket (it imports the SDK first)."""
REPLY_MARGIN = 30.0
"""Seconds a command waits for an answer beyond the servers' own timeouts."""
WATCH_EVERY = 1.0
"""Seconds between the broker's checks that its warm server still runs."""


def socket_file(home: Home, server_pid: int) -> Path:
    return wire.run_dir(home.path) / f"mcp-{server_pid}.sock"


def warm_server_pid(home: Home) -> int | None:
    """The warm server's pid when this process is a command it runs, else None."""
    try:
        pid = int(wire.pid_file(home.path).read_text())
    except (OSError, ValueError):
        return None
    return pid if pid == os.getppid() else None


def broker_client(home: Home, environ: Mapping[str, str]) -> BrokerClient | None:
    """A client of the warm server's broker when this process is a command that server
    runs; None anywhere else."""
    pid = warm_server_pid(home)
    return BrokerClient(home, environ, pid) if pid is not None else None


class BrokerClient(McpClient):
    """The servers of a command the warm server runs, held by its broker."""

    def __init__(self, home: Home, environ: Mapping[str, str], server_pid: int):
        self.home = home
        self.environ = dict(environ)
        self.server_pid = server_pid
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._opened: concurrent.futures.Future[list[Listing]] = concurrent.futures.Future()

    def start(self, specs: Sequence[ServerSpec]) -> None:
        threading.Thread(target=self._open, args=(list(specs),), name="mcp-broker",
                         daemon=True).start()

    def listings(self) -> list[Listing]:
        return self._opened.result()

    def call(self, spec: ServerSpec, tool: str, arguments: dict[str, Any],
             cancelled: Cancelled = never) -> CallResult:
        try:
            reply = self._ask({"op": "call", "spec": spec.to_wire(), "tool": tool,
                               "arguments": arguments}, spec.timeout + REPLY_MARGIN,
                              cancelled)
        except CallCancelled:
            return interrupted(label(tool))
        except (OSError, ValueError) as exc:
            return CallResult.failed(f"{tool} failed: the warm server's MCP broker did "
                                     f"not answer ({exc})")
        return CallResult.from_wire(reply["result"])

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _open(self, specs: list[ServerSpec]) -> None:
        wait = max(spec.connect_timeout for spec in specs) + REPLY_MARGIN
        try:
            reply = self._ask({"op": "open", "specs": [s.to_wire() for s in specs]}, wait)
            self._opened.set_result([Listing.from_wire(item) for item in reply["listings"]])
        except (OSError, ValueError, KeyError) as exc:
            self._opened.set_result([Listing(s.name, error=f"the warm server's MCP broker "
                                             f"did not answer ({exc})") for s in specs])

    def _ask(self, message: dict[str, Any], timeout: float,
             cancelled: Cancelled = never) -> dict[str, Any]:
        """The broker's answer; ``CallCancelled`` once ``cancelled()`` (the connection is
        closed, which tells the broker to cancel the request)."""
        with self._lock:
            sock = self._sock = self._sock or self._connect()
            sock.settimeout(timeout)
            wire.send(sock, message)
            if not _answered(sock, timeout, cancelled):
                self._drop()
                raise CallCancelled
            reply, _ = wire.receive(sock)
        if reply is None:
            self.close()
            raise OSError("the broker closed the connection")
        return reply

    def _connect(self) -> socket.socket:
        path = socket_file(self.home, self.server_pid)
        deadline = time.monotonic() + START_WAIT
        spawned = False
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                with unix_socket.address(path) as address:
                    sock.connect(address)
                return sock
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
            if not spawned:
                spawn_broker(self.home, self.environ, self.server_pid)
                spawned = True
            time.sleep(0.05)


def forget_failure(home: Home, server: str) -> None:
    """Tell the warm server's broker, if one runs, to try ``server`` again at its next
    use instead of at its retry time (it started for ``hermes mcp test``)."""
    try:
        path = socket_file(home, int(wire.pid_file(home.path).read_text()))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            with unix_socket.address(path) as address:
                sock.connect(address)
            wire.send(sock, {"op": "forget", "server": server})
            wire.receive(sock)
    except (OSError, ValueError):
        pass  # no broker: nothing to forget


class CallCancelled(Exception):
    """The user interrupted the turn while the broker ran its call."""


def _answered(sock: socket.socket, timeout: float, cancelled: Cancelled) -> bool:
    """Wait for the answer to begin (True; the receive's own timeout still applies) or
    for ``cancelled()`` (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], CANCEL_EVERY)
        if readable:
            return True
        if cancelled():
            return False
    return True


def spawn_broker(home: Home, environ: Mapping[str, str], server_pid: int) -> None:
    """Start a broker beside the warm server ``server_pid`` (a second one exits at once)."""
    subprocess.Popen(  # noqa: S603 - our own interpreter and module
        python_argv("hermes.mcp.broker", str(home.path), str(server_pid)),
        env=python_environ(home.child_env(environ)), cwd=NEUTRAL_CWD, start_new_session=True,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# -- the broker process ------------------------------------------------------------


class Broker:
    """Answers commands' requests with the servers it keeps."""

    def __init__(self, home: Home, server_pid: int, servers: Any):
        self.home = home
        self.server_pid = server_pid
        self.servers = servers

    async def serve(self) -> None:
        path = socket_file(self.home, self.server_pid)
        path.unlink(missing_ok=True)  # a dead broker's: we hold the lock
        old_umask = os.umask(0o177)
        try:
            with unix_socket.address(path) as address:
                listener = await asyncio.start_unix_server(self._answer, path=address)
        finally:
            os.umask(old_umask)
        stopped = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
        try:
            while self._server_runs() and not stopped.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stopped.wait(), WATCH_EVERY)
        finally:
            listener.close()
            path.unlink(missing_ok=True)
            if self.servers.health_path is not None:
                self.servers.health_path.unlink(missing_ok=True)
            await self.servers.close_all()

    def _server_runs(self) -> bool:
        try:
            os.kill(self.server_pid, 0)
            return int(wire.pid_file(self.home.path).read_text()) == self.server_pid
        except (OSError, ValueError):
            return False

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                      ) -> None:
        try:
            if wire.peer_credentials(writer.get_extra_info("socket"))[1] != os.getuid():
                return
            while (message := await _read(reader)) is not None:
                reply = await _unless_gone(reader, self._reply(message))
                if reply is None:
                    return  # the command cancelled its call by closing the connection
                writer.write(wire.encode(reply))
                await writer.drain()
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass  # the command went away; its servers stay
        finally:
            writer.close()

    async def _reply(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("op") == "forget":
            self.servers.forget_failure(str(message["server"]))
            return {"forgot": True}
        if message.get("op") == "open":
            specs = [ServerSpec.from_wire(data) for data in message["specs"]]
            listings = await asyncio.gather(*(self.servers.open(s) for s in specs))
            return {"listings": [listing.to_wire() for listing in listings]}
        result = await self.servers.call(ServerSpec.from_wire(message["spec"]),
                                         str(message["tool"]), dict(message["arguments"]))
        return {"result": result.to_wire()}


async def _unless_gone(reader: asyncio.StreamReader, work: Coroutine[Any, Any, dict[str, Any]]
                       ) -> dict[str, Any] | None:
    """``work``'s reply, or None (``work`` cancelled) once the command closed its end:
    it sends nothing while it waits for a reply, so anything it sends ends the wait."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(reader.read(1))
    await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        gone.cancel()  # and wait: the next read must not find this one still waiting
        with contextlib.suppress(asyncio.CancelledError):
            await gone
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


async def _read(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    import json

    try:
        head = await reader.readexactly(wire.HEADER.size)
    except asyncio.IncompleteReadError:
        return None
    (length,) = wire.HEADER.unpack(head)
    if length > wire.MAX_FRAME:
        raise ValueError(f"frame of {length} bytes is too large")
    message = json.loads(await reader.readexactly(length))
    if not isinstance(message, dict):
        raise ValueError("a frame must hold a JSON object")
    return message


def main(argv: Sequence[str]) -> int:
    """``python -m hermes.mcp.broker HOME SERVER_PID``: serve until that server is gone."""
    from hermes.home import home_from_path
    from hermes.logs import home_logger
    from hermes.mcp.health import health_file
    from hermes.mcp.pool import Servers

    home = home_from_path(Path(argv[0]))
    server_pid = int(argv[1])
    lock_file = socket_file(home, server_pid).with_suffix(".lock")
    lock = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another command started it first
    servers = Servers(home_logger(home, os.environ, "mcp"),
                      health_file(wire.run_dir(home.path)))
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(Broker(home, server_pid, servers).serve())
    finally:
        lock_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
