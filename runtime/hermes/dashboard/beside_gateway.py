"""The dashboard beside the platforms: ``dashboard.enabled`` in a served profile's config
makes ``hermes gateway run`` serve the dashboard on its own listener
(``dashboard.host``/``dashboard.port``), in the gateway's process and event loop. The CLI
hands ``dashboard_beside`` to the ``Gateway`` (the gateway never imports the dashboard,
which builds on its services).

It is started once every platform has, stopped with them (the gateway owns the
signals), and shown in ``gateway.json`` (``hermes gateway status``) without its token.
The URL with the root's token is said once, at start, as ``hermes dashboard`` says it.
A dashboard that cannot listen is reported like a failed platform; the platforms go on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes.config.dashboard_schema import DashboardConfig
from hermes.errors import UserError
from hermes.gateway.base import PlatformState
from hermes.home import Home
from hermes.http_names import is_loopback

START_WAIT = 10.0


class GatewayDashboard:
    """The dashboard of ``root``'s profiles, served from the gateway's event loop."""

    def __init__(self, root: Path, settings: DashboardConfig, environ: Mapping[str, str],
                 profile: str, runtimes: Mapping[str, Any]):
        self.root = root
        self.settings = settings
        self.environ = dict(environ)
        self.profile = profile
        """The profile whose config enabled it: the printed URL opens its page."""
        self.runtimes = dict(runtimes)
        """The gateway's open runtimes by profile, for pages that run turns."""
        self.status = PlatformState()
        self.url = ""
        """The URL to open, with the root's token (said once; never in the status)."""
        self.warning = ""
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Listen and serve; on failure ``status`` says why (nothing raised)."""
        try:
            await self._start()
        except (UserError, RuntimeError) as exc:
            self.status = PlatformState("failed", str(exc))

    async def _start(self) -> None:
        from hermes.dashboard.app import create_app
        from hermes.dashboard.serve import Start, beyond_loopback, bind, listen_url, tokenized_url
        from hermes.gateway.api_server.platform import quiet_server

        host = self.settings.host
        sock = bind(host, self.settings.port)
        sock.setblocking(False)
        port = sock.getsockname()[1]
        settings = self.settings.model_copy(update={"port": port})
        app = create_app(self.root, settings, environ=self.environ,
                         start_profile=self.profile)
        app.state.runtimes = self.runtimes
        self.url = tokenized_url(Start(self.root, settings, self.environ, self.profile,
                                       scoped=False), port)
        self.warning = "" if is_loopback(host) else beyond_loopback(host, port)
        import uvicorn

        # lifespan on: pages close what they opened (the Chat page's runtimes) at stop
        self._server = quiet_server(uvicorn.Config(
            app, log_config=None, log_level="warning", access_log=False, lifespan="on",
            server_header=False))
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        await self._until_started(self._task)
        self.status = PlatformState("running", listen_url(host, port))  # no label

    async def _until_started(self, task: asyncio.Task[None]) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_WAIT
        while not self._server.started and not task.done() and loop.time() < deadline:
            await asyncio.sleep(0.02)
        if not self._server.started:
            raise RuntimeError(f"the dashboard on {self.settings.host} did not start")

    async def stop(self) -> None:
        """Stop accepting, answer what was accepted, close the listener."""
        if self._server is None or self._task is None:
            return
        self.status = PlatformState("stopping", self.status.detail)
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, SystemExit):
            await self._task
        self.status = PlatformState("stopped", self.status.detail)

    def force(self) -> None:
        """A second signal: close its connections now."""
        if self._server is not None:
            self._server.force_exit = True

    def announcement(self) -> list[str]:
        """What the gateway says once at start: the URL with the root's token (never
        logged or in the status), or why it failed."""
        from hermes.dashboard.serve import cookie_note

        if self.status.state == "failed":
            return [f"hermes gateway: dashboard failed: {self.status.detail}"]
        return [*filter(None, [self.warning]),
                f"hermes gateway: dashboard of the profiles of {self.root}; open (the token "
                f"is a password):\n    {self.url}\n{cookie_note(self.settings)}".rstrip()]


def dashboard_beside(profiles: Sequence[tuple[Home, Any]], environ: Mapping[str, str]
                     ) -> GatewayDashboard | None:
    """The dashboard of the first served profile (``(home, runtime)``) whose config
    enables it, sharing the runtimes of the served profiles of its root; None if none
    does."""
    enabled = [(home, runtime) for home, runtime in profiles
               if runtime.settings.dashboard.enabled]
    if not enabled:
        return None
    home, runtime = enabled[0]
    runtimes = {other.name: opened for other, opened in profiles if other.root == home.root}
    return GatewayDashboard(home.root, runtime.settings.dashboard, environ, home.name,
                            runtimes)
