"""The server: a warm, single-threaded process that forks one child per command.

Start-up imports everything a command needs (litellm above all) and composes the
home's config once; then it accepts connections on ``run/daemon.sock``. Each
connection is checked (``SO_PEERCRED``: the same user, before a byte is read; the
same mount namespace, else the client runs the command itself), then a forked child
takes the client's stdin/stdout/stderr, working directory, environment and arguments
and runs the ordinary CLI on them; the parent goes back to accepting. Forking a
single-threaded process is safe, and the child shares the warm memory copy-on-write.

The server holds ``run/daemon.lock`` for its life (a second one exits at once),
exits after ``runtime.idle_timeout`` seconds without commands, and steps aside for
a client of another version or install (``stale``). A standalone server also ticks
the home's skills curator: once as it starts (after a long pause, the first command
of the day starts the server) and every ``TICK_EVERY`` seconds; a server forked
beside a gateway leaves that to the gateway.
"""

from __future__ import annotations

import fcntl
import functools
import gc
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes import __version__, unix_socket
from hermes.daemon import wire
from hermes.daemon.wire import LOCK_FILE, PID_FILE, STATUS_FILE
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

TICK_EVERY = 600.0
"""Seconds between the curator ticks of a standalone server."""


@dataclass(frozen=True)
class Commands:
    """What a server runs for its clients, given by the CLI that starts it (the daemon
    imports no other front door): ``run(argv, background=[...])`` one command, in the
    child forked for it; ``warm()`` imports what commands need, once, before forking."""

    run: Callable[..., object]
    warm: Callable[[], object]


class Server:
    def __init__(self, home: Home, idle_timeout: float, commands: Commands,
                 parent: int | None = None, tick: Callable[[], object] | None = None,
                 prepare: Callable[[], object] | None = None):
        self.home = home
        self.commands = commands
        self.prepare = prepare
        """Warm-up left for the first command (a server beside a gateway): run once, in
        the server, before that command's child is forked."""
        self.tick = tick
        """Periodic upkeep run in the server itself, between commands (the curator)."""
        self._next_tick = 0.0
        self.idle_timeout = idle_timeout
        self.parent = parent
        """The gateway this server was forked from: it stops when that process is gone."""
        self.dir = wire.run_dir(home.path)
        self.children: set[int] = set()
        self.served = 0
        self.last_active = time.monotonic()
        self.stopping = False
        self.started = time.time()
        self.install = wire.install_id()
        """The installed copy this server runs, as it was when it started: a client
        whose copy has changed since (an upgrade, an edited checkout) is told "stale"."""
        self._lock_fd = -1

    def take_lock(self) -> bool:
        """False when another server already serves this home."""
        private_dir(self.dir)
        os.chmod(self.dir, 0o700)
        self._lock_fd = os.open(self.dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            return False
        return True

    def serve(self) -> None:
        listener = self._listen()
        self.last_active = time.monotonic()  # idle time counts from here, not the warm-up
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, lambda *_: setattr(self, "stopping", True))
        self._write_status()
        try:
            while not (self.stopping and not self.children) and not self._idle():
                self._reap()
                self._maybe_tick()
                if self.parent is not None and os.getppid() != self.parent:
                    self.stopping = True
                ready, _, _ = select.select([listener], [], [], 0.5)
                if ready and not self.stopping:
                    try:
                        self._accept(listener)
                    except OSError as exc:  # nothing a client does stops the server
                        sys.stderr.write(f"hermes server: a connection failed: {exc}\n")
        finally:
            listener.close()
            for name in ("daemon.sock", PID_FILE, STATUS_FILE):
                (self.dir / name).unlink(missing_ok=True)
            os.close(self._lock_fd)  # last: a waiting client may start the next server

    def _listen(self) -> socket.socket:
        path = wire.socket_path(self.home.path)
        path.unlink(missing_ok=True)  # a stale socket: we hold the lock, so it is ours
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            with unix_socket.address(path) as address:
                listener.bind(address)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        listener.listen(64)
        # Renamed into place (as the status below): a reader never sees it empty or half.
        atomic_write(self.dir / PID_FILE, f"{os.getpid()}\n", mode=0o600)
        return listener

    def _maybe_tick(self) -> None:
        if self.tick is None or time.monotonic() < self._next_tick:
            return
        self._next_tick = time.monotonic() + TICK_EVERY
        try:
            self.tick()
        except Exception as exc:  # noqa: BLE001 - upkeep never stops the server
            sys.stderr.write(f"hermes server: curator tick failed: {exc}\n")

    def _idle(self) -> bool:
        return not self.children and time.monotonic() - self.last_active > self.idle_timeout

    def _reap(self) -> None:
        for pid in list(self.children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.children.discard(pid)
                self.last_active = time.monotonic()

    def _accept(self, listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            pid, uid = wire.peer_credentials(conn)
            if uid != os.getuid():  # checked before a byte is read
                return
            conn.settimeout(10)
            try:
                hello, fds = wire.receive(conn, max_fds=3)
            except (OSError, ValueError):
                return
            try:
                if hello is not None and not sees_the_same_files(pid, hello.get("cwd")):
                    wire.send(conn, {"type": "elsewhere"})  # the client runs it in-process
                    return
                self._answer(conn, hello, fds, listener)
            finally:
                for fd in fds:
                    os.close(fd)

    def _answer(self, conn: socket.socket, hello: dict[str, Any] | None, fds: list[int],
                listener: socket.socket) -> None:
        if hello is None:  # a liveness probe (`hermes daemon status`) hung up
            return
        if hello.get("protocol") != wire.PROTOCOL or len(fds) != 3:
            wire.send(conn, {"type": "refused", "message": "unknown request"})
            return
        if hello.get("version") != __version__ or hello.get("install") != self.install:
            wire.send(conn, {"type": "stale"})
            self.stopping = True  # finish the children, then make room for the new one
            return
        from hermes.daemon.client import daemon_setting

        if daemon_setting(self.home, hello.get("environ", {})) == "off":
            wire.send(conn, {"type": "off"})  # the client runs it in-process
            self.stopping = True
            return
        self.last_active = time.monotonic()
        self.served += 1
        if self.prepare is not None:
            prepare, self.prepare = self.prepare, None
            prepare()
        pid = os.fork()
        if pid == 0:  # the child never returns into the server's loop
            try:
                from hermes.daemon.child import run_child

                listener.close()  # the lock and socket stay the server's alone
                os.close(self._lock_fd)
                run_child(conn, hello, fds, self.home, self.commands.run)
            finally:
                os._exit(70)
        self.children.add(pid)
        wire.send(conn, {"type": "accepted", "pid": pid})
        self._write_status()

    def _write_status(self) -> None:
        status = {"pid": os.getpid(), "started_at": self.started, "version": __version__,
                  "install": self.install, "idle_timeout": self.idle_timeout,
                  "served": self.served}
        # Rewritten at every command beside its child: no fsync (a status, not data).
        atomic_write(self.dir / STATUS_FILE, json.dumps(status) + "\n", mode=0o600,
                     durable=False)


def sees_the_same_files(pid: int, cwd: object) -> bool:
    """Whether the client at ``pid`` shares this server's mount namespace (and so its
    files). A client in another container on the same volume does not: its pid is not
    visible here (another pid namespace), or its mount namespace differs (``unshare -m``,
    ``--pid=host``); its commands must not act on this container's files."""
    try:
        ours = os.readlink("/proc/self/ns/mnt")
    except OSError:  # no namespaces to compare (no /proc): the directory must still exist
        return isinstance(cwd, str) and os.path.isdir(cwd)
    try:
        theirs = os.readlink(f"/proc/{pid}/ns/mnt") if pid > 0 else None
    except OSError:
        return False
    return theirs == ours and isinstance(cwd, str) and os.path.isdir(cwd)


def warm_up(home: Home, environ: dict[str, str], commands: Commands) -> float:
    """Import what commands need and compose the home's config; the idle timeout."""
    from hermes.config import compose_config
    from hermes.container import build_runtime  # noqa: F401
    from hermes.models.litellm_client import LiteLLMClient
    from hermes.models.warm import preload_litellm, warm_openai_path

    commands.warm()
    config = compose_config(home, environ).config
    if preload_litellm([LiteLLMClient(config.provider)]):
        warm_openai_path()
    _rehearse(config.provider)
    _probe_sandbox(config, environ)
    timeout = float(config.runtime.idle_timeout)
    assert threading.active_count() == 1, "the server must fork from a single thread"
    # Children would otherwise walk (and so copy) every warm object on their first
    # collection: keep them out of the collector's sight.
    gc.collect()
    gc.freeze()
    return timeout


def _rehearse(provider: Any) -> None:
    """litellm's first-call set-up, done here once instead of in every command."""
    from hermes.models.first_call import rehearse_first_call

    try:
        rehearse_first_call(provider)
    except Exception as exc:  # noqa: BLE001 - a warm-up never stops the server
        sys.stderr.write(f"hermes server: the model call warm-up failed: {exc}\n")


def _probe_sandbox(config: Any, environ: dict[str, str]) -> None:
    """Probe the sandbox backends once here; commands reuse the outcome (bubblewrap's)."""
    from hermes.environments.sandbox.service import choose

    try:
        choose(config.environment.local.sandbox, environ)
    except Exception as exc:  # noqa: BLE001 - a warm-up never stops the server
        sys.stderr.write(f"hermes server: the sandbox probe failed: {exc}\n")


def serve_beside_gateway(homes: list[Home], environ: dict[str, str], commands: Commands
                         ) -> list[int]:
    """Fork one server per home from the gateway before it starts any thread. A server
    warms up (litellm, the CLI's modules, the home's config) at its first command, not
    at the gateway's start: a gateway nobody runs CLI commands beside starts without
    importing litellm before it serves, and holds no warm copy per home (issue 26:
    4.9 s to /health and 423 MiB PSS over 4 processes for 3 profiles). A standalone
    server of such a home is stopped first. Their pids."""
    servers = []
    for home in homes:
        env = {**environ, "HERMES_HOME": str(home.path)}
        _stop_standalone(home)
        server = Server(home, idle_timeout=float("inf"), commands=commands,
                        parent=os.getpid(), prepare=functools.partial(warm_up, home, env, commands))
        if _daemon_off(home, env) or not _retry(server.take_lock):
            continue
        pid = os.fork()
        if pid == 0:
            try:
                server.serve()
            finally:
                os._exit(0)
        os.close(server._lock_fd)  # the child holds the lock now
        servers.append(pid)
    return servers


def _retry(attempt: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not attempt():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _daemon_off(home: Home, environ: dict[str, str]) -> bool:
    """``runtime.daemon: off`` for this home (HERMES_NO_DAEMON is the client's own switch)."""
    from hermes.daemon.client import daemon_setting

    env = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    return daemon_setting(home, env) == "off"


def _stop_standalone(home: Home, timeout: float = 30.0) -> None:
    try:
        pid = int(wire.pid_file(home.path).read_text())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + timeout
    while wire.socket_path(home.path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def serve_home(home: Home, environ: dict[str, str], commands: Commands) -> int:
    """``hermes daemon serve``: serve until idle, stopped or replaced. Exit status."""
    from hermes.learning.curator import tick_home

    server = Server(home, idle_timeout=600, commands=commands,
                    tick=lambda: tick_home(home, environ))
    if not server.take_lock():
        sys.stderr.write(f"a hermes server already serves profile {home.name}\n")
        return 0
    server.idle_timeout = warm_up(home, environ, commands)
    server.serve()
    return 0
