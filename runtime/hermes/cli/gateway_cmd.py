"""``hermes gateway run | status | stop``: the long-running process serving platforms."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

import typer

from hermes.cli.app import new_app, out, state
from hermes.errors import UserError
from hermes.home import Home

if TYPE_CHECKING:
    from hermes.gateway.runner import Gateway

app = new_app("The gateway: one long-running process serving the platforms (the "
              "OpenAI-compatible API server, ...) of one or more profiles.")


def _homes(ctx: typer.Context, profiles: str | None) -> list[Home]:
    st = state(ctx)
    home = st.home()
    names = [n.strip() for n in (profiles or "").split(",") if n.strip()]
    if not names:
        return [home]
    manager = st.manager()
    return [manager.home(name) for name in dict.fromkeys(names)]


@app.command()
def run(
    ctx: typer.Context,
    overrides: list[str] | None = typer.Argument(None, help="Hydra overrides for every "
                                                 "profile served, e.g. gateway.shutdown_grace=5"),
    profiles: str | None = typer.Option(None, "--profiles", help="Serve these profiles "
                                        "(comma-separated) in this one process."),
) -> None:
    """Serve the enabled platforms until SIGTERM or Ctrl-C (a second one stops at once)."""
    import asyncio

    from hermes.dashboard.beside_gateway import dashboard_beside
    from hermes.gateway.runner import Gateway

    homes = _homes(ctx, profiles)
    extra = _configured_profiles(ctx, homes[0]) if not profiles else []
    gateway = Gateway([*homes, *extra], state(ctx).environ, overrides or [],
                      beside=dashboard_beside)
    from hermes.cli.daemon_cmd import served_commands
    from hermes.daemon.server import serve_beside_gateway

    gateway.lock()  # before anything else: a second gateway must not touch this one's server
    try:
        servers = serve_beside_gateway(gateway.homes, dict(state(ctx).environ),  # no threads yet
                                       served_commands())
        try:
            asyncio.run(gateway.run(_announce))
        finally:
            _stop(servers)
    finally:
        gateway.unlock()
    typer.echo("hermes gateway: stopped", err=True)


def _announce(gateway: Gateway) -> None:
    """Said once every platform that could start listens (failed ones first, one line each)."""
    serving: dict[str, list[str]] = {}
    for profile, name, platform in gateway.platform_states():
        if platform.state == "failed":
            typer.echo(f"hermes gateway: {profile}/{name} failed: {platform.detail}", err=True)
        elif platform.state == "reconnecting":
            typer.echo(f"hermes gateway: {profile}/{name} not connected ({platform.detail}); "
                       "retrying with backoff", err=True)
            serving.setdefault(profile, [])
        else:
            serving.setdefault(profile, []).append(platform.detail)
    addresses = ", ".join(dict.fromkeys(a for found in serving.values() for a in found))
    where = f" at {addresses}" if addresses else ""
    typer.echo(f"hermes gateway: serving {', '.join(serving)} (pid {os.getpid()}){where}; "
               "Ctrl-C stops", err=True)
    for line in gateway.dashboard.announcement() if gateway.dashboard else []:
        typer.echo(line, err=True)


def _stop(pids: list[int]) -> None:
    """Stop the CLI servers forked beside the gateway (commands they run finish first)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _configured_profiles(ctx: typer.Context, home: Home) -> list[Home]:
    from hermes.config import compose_config

    listed = compose_config(home, state(ctx).environ,
                            hydra_in_child=True).config.gateway.profiles
    manager = state(ctx).manager()
    return [manager.home(name) for name in listed if name != home.name]


@app.command()
def status(ctx: typer.Context,
           all_: bool = typer.Option(False, "--all", help="Every profile, not just this one.")
           ) -> None:
    """Whether a gateway serves the profile: pid, uptime, platforms, active turns."""
    from hermes.gateway.pidfile import read_status, running_pid

    st = state(ctx)
    manager = st.manager()
    homes = [manager.home(name) for name in manager.names()] if all_ else [st.home()]
    any_running = False
    for home in homes:
        pid = running_pid(home)
        info = read_status(home) if pid else None
        if pid is None or info is None:
            out(f"{home.name}: not running")
            continue
        any_running = True
        uptime = _duration(time.time() - float(info.get("started_at", time.time())))
        out(f"{home.name}: {info.get('state', 'running')} (pid {pid}, up {uptime}, "
            f"{info.get('active_turns', 0)} turn(s) running, "
            f"{info.get('sessions', 0)} chat session(s))")
        for name, platform in sorted(info.get("platforms", {}).items()):
            out(f"  {name}: {platform.get('state')} {platform.get('detail', '')}".rstrip()
                + _next_attempt(platform.get("retry_at")))
        if "dashboard" in info:
            dashboard = info["dashboard"]
            out(f"  dashboard: {dashboard.get('state')} {dashboard.get('detail', '')}".rstrip())
    if not any_running:
        raise typer.Exit(1)


@app.command()
def stop(ctx: typer.Context,
         timeout: float = typer.Option(60.0, help="Seconds to wait for it to exit.")) -> None:
    """Stop the profile's gateway gracefully (SIGTERM) and wait for it to exit."""
    from hermes.gateway.pidfile import running_pid

    home = state(ctx).home()
    pid = running_pid(home)
    if pid is None:
        out(f"{home.name}: no gateway is running")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running_pid(home) != pid:
            out(f"{home.name}: gateway stopped (pid {pid})")
            return
        time.sleep(0.1)
    raise UserError(f"the gateway (pid {pid}) is still running after {timeout:g} s; "
                    f"`kill -TERM {pid}` again stops it at once")


def _next_attempt(retry_at: object) -> str:
    """`` — next attempt in 4 s`` for a platform that is reconnecting."""
    if not isinstance(retry_at, int | float):
        return ""
    return f" — next attempt in {max(retry_at - time.time(), 0):.0f} s"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
