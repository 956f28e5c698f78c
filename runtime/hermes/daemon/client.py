"""The thin client: hand a command to the home's warm server, starting one if needed.

``run_remote(argv)`` returns the command's exit status, or None when the command
should run in-process instead (the server is off for this profile, or cannot be
started). It imports only the standard library, ``hermes.home``, the wire format
and the YAML reader of config layers: never litellm, Hydra, OmegaConf or docker.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes import __version__, unix_socket
from hermes.daemon import wire
from hermes.errors import HermesError
from hermes.hints import command
from hermes.home import Home, resolve_home

START_TIMEOUT = 90.0
"""Seconds a new server may take to start (it imports litellm and composes config)."""


def run_remote(argv: Sequence[str], environ: Mapping[str, str], verbose: bool = False,
               interactive: bool = False) -> int | None:
    """``interactive`` (chat at a terminal): with no server running, one is started for
    the next commands and this chat runs in-process, so its prompt shows at once
    instead of after the server's start-up."""
    from hermes.argv import MissingProfileName, parse_profile_flag

    if environ.get("HERMES_NO_DAEMON", "") not in ("", "0"):
        return None
    try:
        home = resolve_home(parse_profile_flag(argv)[0], environ)
    except (HermesError, MissingProfileName):
        return None  # in-process reports it properly
    for _ in range(2):  # a stale server steps aside once
        sock = connect(home)  # a running server checks runtime.daemon itself
        if sock is None:
            if not home.path.is_dir() or daemon_setting(home, environ) == "off":
                return None
            if interactive:
                if not server_holds_lock(home):
                    _note(verbose, "starting the hermes server for the next commands; "
                                   "this chat runs in-process")
                    start_server(home, environ)
                return None
            sock = start_and_connect(home, environ, verbose)
        if sock is None:
            _note(verbose, "the hermes server could not start; running in-process")
            return None
        with sock:
            reply = _hand_over(sock, argv, environ)
            if reply.get("type") == "accepted":
                return follow(sock, int(reply["pid"]), home.name)
            if reply.get("type") == "off":
                return None  # runtime.daemon is now off: the server has stopped
            if reply.get("type") == "elsewhere":
                _note(verbose, "the hermes server runs in another container or mount "
                               "namespace; running in-process")
                return None
            if reply.get("type") != "stale":
                _note(verbose, f"the hermes server refused: {reply.get('message')}")
                return None
        _wait_gone(home)
    return None


def daemon_setting(home: Home, environ: Mapping[str, str]) -> str:
    """``runtime.daemon`` as the layers set it (``auto`` unless one says ``off``)."""
    if environ.get("HERMES_NO_DAEMON", "") not in ("", "0"):
        return "off"
    override = environ.get("HERMES_CONFIG__RUNTIME__DAEMON")
    if override:
        return override
    from hermes.config.layers import load_layers

    setting = "auto"
    try:
        layers = load_layers(home, {k: v for k, v in environ.items() if k != "HERMES_HOME"})
    except HermesError:
        return "off"  # a broken config is reported by the in-process run
    for layer in layers:
        runtime = layer.body.get("runtime")
        if isinstance(runtime, dict) and "daemon" in runtime:
            value = runtime["daemon"]
            setting = "off" if value is False or value == "off" else str(value)
    return setting


def connect(home: Home) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with unix_socket.address(wire.socket_path(home.path)) as address:
            sock.connect(address)
    except OSError:
        sock.close()
        return None
    return sock


def start_server(home: Home, environ: Mapping[str, str]) -> Any:
    """``hermes daemon serve`` for ``home``, detached, its output in ``logs/daemon.log``;
    in ``/`` with ``python -P`` (``hermes.python_child``): nothing in the home is importable.
    Each command brings its own directory and environment."""
    import subprocess  # only when a server must be started: the common path skips it

    from hermes.fsutil import private_dir
    from hermes.python_child import NEUTRAL_CWD, python_argv, python_environ

    private_dir(home.logs_dir)
    log = os.open(home.logs_dir / "daemon.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            python_argv("hermes", "daemon", "serve"),
            env=python_environ(home.child_env(environ)), cwd=NEUTRAL_CWD,
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    finally:
        os.close(log)


def start_and_connect(home: Home, environ: Mapping[str, str], verbose: bool
                      ) -> socket.socket | None:
    """Start a server (unless one is starting) and connect to it; None if none comes up."""
    _note(verbose, f"starting the hermes server for profile {home.name}")
    process = start_server(home, environ)
    spawned = 1
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        sock = connect(home)
        if sock is not None:
            return sock
        if process.poll() is not None and not server_holds_lock(home):
            if process.returncode != 0 or spawned >= 3:
                return None  # it failed: the in-process run says why
            process = start_server(home, environ)  # it lost a race to one now gone
            spawned += 1
        time.sleep(0.02)
    return None


def server_holds_lock(home: Home) -> bool:
    """Whether some server (starting, serving or stopping) holds the home's lock."""
    path = wire.run_dir(home.path) / "daemon.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _hand_over(sock: socket.socket, argv: Sequence[str], environ: Mapping[str, str]
               ) -> dict[str, Any]:
    hello = {"protocol": wire.PROTOCOL, "version": __version__, "install": wire.install_id(),
             "argv": list(argv), "cwd": os.getcwd(), "environ": dict(environ)}
    try:
        wire.send(sock, hello, fds=[0, 1, 2])
        reply, _ = wire.receive(sock)
    except (OSError, ValueError) as exc:
        return {"type": "refused", "message": str(exc)}
    return reply or {"type": "refused", "message": "no answer"}


def follow(sock: socket.socket, pid: int, profile: str) -> int:
    """Relay Ctrl-C to the command; its exit status (1 if the server died under it, then
    how to go on in ``profile``)."""

    def interrupt(*_: object) -> None:
        with contextlib.suppress(OSError):
            wire.send(sock, {"type": "interrupt"})

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        while True:
            try:
                message, _ = wire.receive(sock)
            except (OSError, ValueError):
                message = None
            if message is None:
                sys.stderr.write(f"error: the hermes server stopped while running this "
                                 f"command (pid {pid}); what was done is saved — continue "
                                 f"with `{command(profile, 'chat --continue')}`\n")
                return 1
            if message.get("type") == "exit":
                return int(message.get("code", 1))
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_gone(home: Home, timeout: float = 30.0) -> None:
    """Wait until a stale server has let go of the socket."""
    deadline = time.monotonic() + timeout
    path: Path = wire.socket_path(home.path)
    while time.monotonic() < deadline and path.exists():
        time.sleep(0.02)


def _note(verbose: bool, text: str) -> None:
    if verbose:
        sys.stderr.write(f"hermes: {text}\n")
