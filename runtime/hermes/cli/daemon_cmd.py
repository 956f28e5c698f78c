"""``hermes daemon start | stop | status``: the profile's warm server, by hand.

``hermes -z`` and ``hermes chat`` start it on first use anyway (``runtime.daemon:
auto``) and it exits after ``runtime.idle_timeout`` seconds without commands.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import TYPE_CHECKING

import typer

from hermes.cli.app import new_app, out, state
from hermes.errors import UserError
from hermes.hints import command
from hermes.home import Home

if TYPE_CHECKING:
    from hermes.daemon.server import Commands

app = new_app("The profile's warm server that answers `hermes -z` and `hermes chat` "
              "without importing litellm each time.")


def _status(home: Home) -> dict[str, object] | None:
    from hermes.daemon import wire
    from hermes.daemon.client import connect

    sock = connect(home)
    if sock is None:
        return None
    sock.close()
    try:
        data: dict[str, object] = json.loads((wire.run_dir(home.path) / "daemon.json").read_text())
    except (OSError, ValueError):
        return {}
    return data


@app.command()
def status(ctx: typer.Context) -> None:
    """Whether the server runs: pid, uptime, commands served, idle timeout."""
    home = state(ctx).home()
    info = _status(home)
    if info is None:
        out(f"{home.name}: no server running (the next `{command(home.name, '-z')}` or "
            f"`{command(home.name, 'chat')}` starts one)")
        raise typer.Exit(1)
    uptime = int(time.time() - float(str(info.get("started_at", time.time()))))
    out(f"{home.name}: server running (pid {info.get('pid')}, up {uptime}s, "
        f"{info.get('served', 0)} command(s) served, exits after "
        f"{info.get('idle_timeout')}s idle, version {info.get('version')})")


@app.command()
def start(ctx: typer.Context) -> None:
    """Start the server now (it is started on first use anyway)."""
    from hermes.daemon.client import start_and_connect

    st = state(ctx)
    home = st.home()
    if _status(home) is not None:
        out(f"{home.name}: the server is already running")
        return
    sock = start_and_connect(home, st.environ, verbose=False)
    if sock is None:
        raise UserError(f"the server did not start; see {home.logs_dir / 'daemon.log'}")
    sock.close()
    out(f"{home.name}: server started")


@app.command()
def stop(ctx: typer.Context, timeout: float = typer.Option(30.0, help="Seconds to wait.")
         ) -> None:
    """Stop the server (commands it is running finish first)."""
    from hermes.daemon import wire

    home = state(ctx).home()
    info = _status(home)
    if info is None or not info.get("pid"):
        out(f"{home.name}: no server running")
        return
    pid = int(str(info["pid"]))
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and wire.socket_path(home.path).exists():
        time.sleep(0.05)
    if wire.socket_path(home.path).exists():
        raise UserError(f"the server (pid {pid}) is still running after {timeout:g} s")
    out(f"{home.name}: server stopped (pid {pid})")


@app.command(hidden=True)
def serve(ctx: typer.Context) -> None:
    """Run the server in the foreground (what `start` and the first command launch)."""
    from hermes.daemon.server import serve_home

    st = state(ctx)
    raise typer.Exit(serve_home(st.home(), dict(st.environ), served_commands()))


def served_commands() -> Commands:
    """The CLI as a warm server runs it (``hermes.daemon.server.Commands``): the daemon
    is given it and imports no front door."""
    from hermes.cli.main import run
    from hermes.daemon.server import Commands

    return Commands(run=run, warm=_warm)


def _warm() -> None:
    """What commands need, imported in the server once, before it forks."""
    import prompt_toolkit.shortcuts  # noqa: F401 - interactive chat

    from hermes.cli import chat_cmd, chat_repl, main  # noqa: F401 - imported to be warm
