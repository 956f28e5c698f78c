"""The ``dashboard`` section: where ``hermes dashboard`` listens (``hermes.dashboard``)."""

from __future__ import annotations

from typing import Literal

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
    cookie_host: Literal["label", "loopback"] = "label"
    """Where a dashboard on loopback keeps the browser's session cookie. ``label``: on
    the token's secret name ``<label>.localhost`` (the printed URL's host), which no
    other server knows, so no other server on this machine receives the cookie; needs a
    browser that resolves ``*.localhost`` (Chromium, Firefox, curl; older Safari does
    not). ``loopback``: for such a browser, the URL is ``http://127.0.0.1:PORT/...`` and
    the cookie is set for ``127.0.0.1`` (named with the port and a tag of the token, so
    two dashboards keep theirs apart). Risk: cookies do not isolate ports, so every
    server on 127.0.0.1, on any port (one the agent starts with its terminal included),
    receives that cookie and can act as you in the dashboard until you log out."""
    open_browser: bool = True
    """Open the tokenized URL in the desktop's browser at start (when there is a display;
    ``--no-open`` skips it once)."""
