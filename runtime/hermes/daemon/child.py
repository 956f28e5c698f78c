"""A forked child of the server: one CLI command, run on the client's terminal.

It takes the client's stdin/stdout/stderr, working directory and environment,
checks that the command is for the server's home, and runs ``hermes.cli.main``
exactly as the client would have in-process. An ``interrupt`` from the client
(its Ctrl-C) becomes SIGINT here, so the CLI's own Ctrl-C handling applies. The
exit status goes back to the client; then the child lets go of the client's
terminal, runs the work the command left for later (``CliState.background``: a
chat's learning review still running), and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn

from hermes.daemon import wire
from hermes.home import Home


def run_child(conn: socket.socket, hello: dict[str, Any], fds: list[int], home: Home,
              run: Callable[..., object]) -> NoReturn:
    code = 70
    background: list[Callable[[], None]] = []
    try:
        _take_over(hello, fds)
        conn.settimeout(None)
        watch_interrupts(conn)
        code = _run(hello, home, background, run)
    except BaseException:  # noqa: BLE001 - the client must get an answer whatever happens
        import traceback

        traceback.print_exc()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client may hang up now
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        with contextlib.suppress(OSError):
            wire.send(conn, {"type": "exit", "code": code})
        _finish(background)
        os._exit(code)


def _finish(background: list[Callable[[], None]]) -> None:
    """Run what the command left for later, away from the client's terminal (its
    stdin, stdout and stderr become /dev/null: the user has their prompt back)."""
    if not background:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    os.close(null)
    for work in background:
        with contextlib.suppress(BaseException):
            work()


def _take_over(hello: dict[str, Any], fds: list[int]) -> None:
    """Become the client: its stdio, cwd, environment; default signal handling."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False,  # noqa: SIM115
                      buffering=1 if os.isatty(1) else -1)
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False,  # noqa: SIM115
                      buffering=1)
    os.chdir(hello["cwd"])
    os.environ.clear()
    os.environ.update(hello["environ"])


def _run(hello: dict[str, Any], home: Home, background: list[Callable[[], None]],
         run: Callable[..., object]) -> int:
    from hermes.argv import split_profile_flag
    from hermes.errors import HermesError
    from hermes.home import resolve_home

    argv: list[str] = hello["argv"]
    try:
        asked = resolve_home(split_profile_flag(argv)[0], os.environ)
    except HermesError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    if asked.path != home.path:  # a server never serves another home
        sys.stderr.write(f"error: this server serves profile {home.name}, not {asked.name}\n")
        return 2
    try:
        run(argv, background=background)
    except SystemExit as exc:
        return _status(exc.code)
    except KeyboardInterrupt:
        return 130
    return 0


def _status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def watch_interrupts(conn: socket.socket) -> None:
    """Turn the client's ``interrupt`` messages into SIGINT for this process."""

    def listen() -> None:
        while True:
            try:
                message, _ = wire.receive(conn)
            except (OSError, ValueError):
                return
            if message is None:  # the client is gone: stop, leaving a valid transcript
                os.kill(os.getpid(), signal.SIGINT)
                return
            if message.get("type") == "interrupt":
                os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=listen, name="client-interrupts", daemon=True).start()
