"""What the profile adds to the agent and can fail on its own: its MCP servers (started
here, each within a short bound, unless the warm server is backing one off), its enabled
plugins (imported and registered here, as a runtime would) and its shell hooks (which
run only once accepted)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from hermes.doctor.base import Check
from hermes.errors import ConfigError
from hermes.home import Home

PROBE_WAIT = 10.0
"""Seconds an MCP server may take to start here (less than a runtime allows)."""


def check_extensions(home: Home, environ: Mapping[str, str], overrides: list[str], *,
                     offline: bool = False) -> list[Check]:
    from hermes.config import compose_config

    try:
        config = compose_config(home, environ, overrides).config
    except ConfigError:
        return []  # the config row already says why
    return (check_mcp(home, environ, dict(config.mcp_servers), offline)
            + check_plugins(home, environ) + check_shell_hooks(home, config.hooks))


def check_mcp(home: Home, environ: Mapping[str, str], servers: dict[str, Any],
              offline: bool) -> list[Check]:
    """One row per enabled server: started (its tools), or why not."""
    from hermes.daemon.wire import run_dir
    from hermes.mcp.health import health_file, read_health
    from hermes.mcp.spec import server_specs

    specs, problems = server_specs(servers, environ)
    rows = [Check("mcp", "fail", problem, "`hermes config set NAME VALUE`")
            for problem in problems]
    health = read_health(health_file(run_dir(home.path)))
    backed_off = {name for name, h in health.items() if h.state == "failing" and h.retry_in()}
    for name in sorted(backed_off & {s.name for s in specs}):
        rows.append(Check(f"mcp {name}", "fail", f"warm server: {health[name].describe()}",
                          f"`hermes mcp test {name}` shows why"))
    probed = [replace(s, connect_timeout=min(s.connect_timeout, PROBE_WAIT)) for s in specs
              if s.name not in backed_off and not (offline and s.url is not None)]
    return rows + _probe(home, environ, probed)


def _probe(home: Home, environ: Mapping[str, str], specs: list[Any]) -> list[Check]:
    from hermes.mcp.manage import stderr_note
    from hermes.mcp.service import start_servers

    if not specs:
        return []
    service = start_servers(home, environ, specs, [], shared=False)
    try:
        listings = service.listings()
    finally:
        service.close()
    rows = []
    for spec, listing in zip(specs, listings, strict=True):
        if listing.error is None:
            rows.append(Check(f"mcp {spec.name}", "ok", f"started in {listing.seconds:.1f} s, "
                              f"{len(listing.tools)} tools"))
            continue
        stderr = stderr_note(home, environ, listing.stderr[-1:]).split("\n")[-1].strip()
        detail = f"{listing.error}" + (f" (stderr: {stderr})" if stderr else "")
        rows.append(Check(f"mcp {spec.name}", "fail", detail,
                          f"`hermes mcp test {spec.name}` shows its stderr; `hermes config "
                          f"set mcp_servers.{spec.name}.enabled false` turns it off"))
    return rows


def check_plugins(home: Home, environ: Mapping[str, str]) -> list[Check]:
    """The enabled plugins, loaded as a runtime would: one row for each that fails."""
    from hermes.plugins.manage import Plugins

    plugins = Plugins(home, environ)
    if not plugins.settings.enabled:
        return []
    host = plugins.host()
    host.warn = lambda line: None  # each problem is a row of its own
    states = host.registrations().states
    rows = [Check(f"plugin {s.key}", "fail" if s.status == "failed" else "warn", s.detail,
                  f"`hermes plugins disable {s.key}`; the traceback is in "
                  f"{home.logs_dir / 'plugins.log'}" if s.status == "failed" else
                  "`hermes config set NAME VALUE`")
            for s in states if s.status in ("failed", "missing env")]
    loaded = sum(1 for s in states if s.status == "loaded")
    return rows + [Check("plugins", "ok", f"{loaded} enabled plugin{'s' if loaded != 1 else ''}"
                         " loaded")] if loaded and not rows else rows


def check_shell_hooks(home: Home, hooks: Mapping[str, Any]) -> list[Check]:
    """A warning for each configured shell hook the user has not accepted (it never runs)."""
    from hermes.plugins.shell_hooks import Consent, hook_specs

    consent = Consent(home)
    return [Check("shell hook", "warn", f"{spec.describe()} is not accepted and does not run",
                  "`hermes hooks accept` (or --accept-hooks)")
            for spec in hook_specs(hooks) if not consent.has(spec)]
