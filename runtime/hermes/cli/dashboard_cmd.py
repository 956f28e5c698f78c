"""``hermes dashboard``: the profiles of this root in a browser (``hermes.dashboard``)."""

from __future__ import annotations

import sys

import typer

from hermes.cli.app import state
from hermes.errors import UserError


def dashboard(
    ctx: typer.Context,
    host: str | None = typer.Option(None, "--host", help="Address to listen on (default: "
                                    "dashboard.host, 127.0.0.1). Beyond loopback only "
                                    "behind TLS or over SSH port forwarding."),
    port: int | None = typer.Option(None, "--port", min=0, max=65535,
                                    help="TCP port (default: dashboard.port, 9119; 0: any "
                                         "free port)."),
    no_open: bool = typer.Option(False, "--no-open", help="Do not open a browser."),
) -> None:
    """Serve the dashboard: every profile of this root in a browser, until Ctrl-C.

    Prints the URL to open once, with its token (a password, kept 0600 in
    <root>/dashboard/token). With -p NAME the URL carries that profile's own token
    (<home>/dashboard/profile-token) and opens that profile only."""
    from hermes.config import compose_config
    from hermes.dashboard.serve import Start, serve

    if host is not None and not host.strip():
        raise UserError("--host: empty — give an address, e.g. 127.0.0.1 (loopback) or 0.0.0.0")
    st = state(ctx)
    home = st.home()
    settings = compose_config(home, st.environ).config.dashboard
    chosen = {key: value for key, value in (("host", host), ("port", port)) if value is not None}
    start = Start(home.root, settings.model_copy(update=chosen), st.environ, home.name,
                  scoped=st.profile is not None)
    serve(start, say=_say, warn=_warn, open_browser=settings.open_browser and not no_open)
    _say("hermes dashboard: stopped")


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _warn(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
