"""The ``dashboard`` section: where ``hermes dashboard`` listens (``hermes.dashboard``)."""

from __future__ import annotations

from pydantic import Field

from hermes.config.sections import NonBlank, Section

DEFAULT_PORT = 9119
"""The dashboard's port unless ``dashboard.port`` or ``--port`` names another."""


class DashboardConfig(Section):
    """The web dashboard: the profiles of one root in a browser, behind a token."""

    enabled: bool = False
    """Serve the dashboard from ``hermes gateway run`` too, on its own listener (``hermes
    dashboard`` serves it whatever this says)."""
    host: NonBlank = "127.0.0.1"
    """The address to listen on. Loopback by default; any other address exposes the
    dashboard to the network: put TLS in front (a reverse proxy) or reach it over SSH port
    forwarding instead (README: Dashboard)."""
    port: int = Field(DEFAULT_PORT, ge=0, le=65535)
    """The TCP port; 0: any free port (the printed URL names it)."""
    allowed_hosts: list[NonBlank] = Field(default_factory=list)
    """More names the dashboard answers to in the ``Host`` header, e.g. the name a reverse
    proxy forwards (``*``: any). Loopback names and the bound address always work."""
    open_browser: bool = True
    """Open the tokenized URL in the desktop's browser at start (when there is a display;
    ``--no-open`` skips it once)."""
