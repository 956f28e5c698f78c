"""Running the dashboard: bind the address, say the URL once, serve until Ctrl-C.

The token is printed here and nowhere else: uvicorn's access log (which would record
``?token=``) is off.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hermes.config.dashboard_schema import DashboardConfig
from hermes.dashboard.pages import first_page
from hermes.dashboard.tokens import Tokens, label_of
from hermes.errors import UserError
from hermes.http_names import LABEL_DOMAIN, WILDCARDS, is_loopback


@dataclass(frozen=True)
class Start:
    """What ``hermes dashboard`` was asked for."""

    root: Path
    settings: DashboardConfig
    environ: Mapping[str, str]
    profile: str
    """The profile the printed URL opens."""
    scoped: bool
    """Print that profile's own token (it opens that profile only), not the root's."""


def serve(start: Start, say: Callable[[str], None], warn: Callable[[str], None],
          open_browser: bool) -> None:
    """Serve the dashboard of ``start.root`` until interrupted."""
    import uvicorn

    from hermes.dashboard.app import create_app

    host = start.settings.host
    sock = bind(host, start.settings.port)
    port = sock.getsockname()[1]
    url = tokenized_url(start, port)
    if not is_loopback(host):
        warn(beyond_loopback(host, port))
    settings = start.settings.model_copy(update={"port": port})  # 0: the port it got
    app = create_app(start.root, settings, environ=start.environ,
                     start_profile=start.profile)
    say(f"hermes dashboard: serving the profiles of {start.root}; open (the token is "
        f"a password):\n    {url}\n{cookie_note(start.settings)}Ctrl-C stops it.")
    if open_browser and _has_display(start.environ):
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                            server_header=False, lifespan="on")
    _stop_on_sigterm()
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it obeyed
        uvicorn.Server(config).run(sockets=[sock])


def _stop_on_sigterm() -> None:
    """SIGTERM (``docker stop``, ``systemctl stop``) stops it as Ctrl-C does, exit 0:
    uvicorn shuts down gracefully, then re-raises the signal it obeyed, which lands here."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.default_int_handler)


def beyond_loopback(host: str, port: int) -> str:
    """The warning for a dashboard listening where other machines may reach it."""
    return (f"hermes dashboard: listening on {host}:{port}, beyond loopback — anyone who "
            "reaches it is one token away from every profile: serve it through TLS (a "
            "reverse proxy) or use SSH port forwarding (README: Dashboard)")


def tokenized_url(start: Start, port: int) -> str:
    """The URL to open. On loopback (or a wildcard address, as in Docker) its host is the
    token's secret ``<label>.localhost`` (``tokens``), the only name its session cookie
    is set for, or with ``cookie_host: loopback`` the loopback address; beyond loopback
    the bound address, the user's own."""
    tokens = Tokens(start.root)
    token = tokens.profile_token(start.profile) if start.scoped else tokens.root_token()
    host = _normal(start.settings.host)
    if not _on_loopback(host):
        shown = host
    elif start.settings.cookie_host == "loopback":
        shown = "127.0.0.1" if host == "0.0.0.0" else "[::1]" if host == "[::]" else host
    else:
        shown = label_of(token) + LABEL_DOMAIN
    return f"http://{shown}:{port}/p/{start.profile}/{first_page().name}?token={token}"


def cookie_note(settings: DashboardConfig) -> str:
    """The line said under the URL on loopback (none beyond it): where to turn when the
    browser cannot open ``*.localhost``, or the risk ``cookie_host: loopback`` takes."""
    if not _on_loopback(_normal(settings.host)):
        return ""
    if settings.cookie_host == "loopback":
        return ("dashboard.cookie_host is loopback: every server on 127.0.0.1, on any "
                "port, receives this dashboard's session cookie (README: Dashboard).\n")
    return ("If the browser cannot open that address (older Safari does not resolve "
            "*.localhost): dashboard.cookie_host: loopback (README: Dashboard).\n")


def _on_loopback(host: str) -> bool:
    return is_loopback(host) or host in WILDCARDS


def listen_url(host: str, port: int) -> str:
    """Where it listens, without the secret label (for ``hermes gateway status``)."""
    shown = ("127.0.0.1" if host == "0.0.0.0" else "[::1]") if _normal(host) in WILDCARDS \
        else _normal(host)
    return f"http://{shown}:{port}/"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; one line naming the fix if it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise _cannot_listen(exc, host, port) from None
    sock.listen(128)
    return sock


def _cannot_listen(exc: OSError, host: str, port: int) -> UserError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EADDRINUSE:
        fix = ("stop what uses it or pick another port: `hermes dashboard --port PORT` (or "
               "`hermes config set dashboard.port PORT`)")
    else:
        fix = ("listen on an address this machine has: `hermes dashboard --host 127.0.0.1` "
               "(or `hermes config set dashboard.host ADDRESS`)")
    return UserError(f"cannot listen on {host}:{port}: {reason} — {fix}")


def _normal(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _has_display(environ: Mapping[str, str]) -> bool:
    """A desktop to open a browser on (not an SSH session on a server)."""
    return sys.platform == "darwin" or bool(environ.get("DISPLAY") or
                                            environ.get("WAYLAND_DISPLAY")) \
        and "SSH_CONNECTION" not in environ and os.name == "posix"
