"""``hermes mcp``: MCP servers whose tools the agent gets (list, add, remove, test), and
``serve``: this profile as an MCP server for other agents (Claude Code, Cursor, Codex).

Thin: parse, call ``hermes.mcp.manage`` / ``serve_run``, render. Only ``test`` and
``serve`` import the MCP SDK.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from hermes.cli.app import new_app, out, state

app = new_app("MCP: connect MCP servers' tools to the agent, or serve this profile to MCP "
              "clients.")


@app.command("list")
def list_servers(ctx: typer.Context) -> None:
    """The profile's MCP servers (``mcp_servers``): how each is reached and which of its
    tools the agent gets. Connects to none (`hermes mcp test NAME` does)."""
    from hermes.mcp.manage import configured, unset_secrets

    st = state(ctx)
    servers, display = configured(st.home(), st.environ)
    if not servers:
        out("(no MCP servers) add one with `hermes mcp add NAME -- COMMAND ARGS` or "
            "`hermes mcp add NAME --url URL`")
        return
    rows = [("NAME", "STATUS", "TRANSPORT", "TOOLS", "TARGET")]
    for name, server in servers.items():
        shown = display.get(name, {})
        target = " ".join([shown.get("command") or "", *shown.get("args", [])]).strip() \
            if server.command else str(shown.get("url"))
        unset = unset_secrets(shown)
        status = "enabled" if server.enabled else "disabled"
        rows.append((name, f"{status}, {', '.join(unset)} unset" if unset else status,
                     "stdio" if server.command else "http", _filter(server), target))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        out("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)),
                       row[4]]).rstrip())
    for line in warm_health(st.home(), servers):
        out(line)
    enabled = sum(1 for s in servers.values() if s.enabled)
    out(f"\n{len(servers)} server{'s' if len(servers) != 1 else ''}, {enabled} enabled; their "
        "tools are mcp_<server>_<tool>; check one with `hermes mcp test NAME`")


def warm_health(home: Any, servers: dict[str, Any]) -> list[str]:
    """Lines for what the warm server's broker found: servers failing, tools not offered."""
    from hermes.daemon.wire import run_dir
    from hermes.mcp.base import TASK_ONLY
    from hermes.mcp.health import health_file, read_health

    health = read_health(health_file(run_dir(home.path)))
    lines = [f"{name}: {h.describe()}" for name, h in health.items()
             if name in servers and h.state == "failing"]
    lines += [f"{name}: {', '.join(h.task_only)} {TASK_ONLY}" for name, h in health.items()
              if name in servers and h.state == "running" and h.task_only]
    return ["", *lines] if lines else []


def _filter(server: Any) -> str:
    parts = [f"{k} {','.join(v)}" for k, v in (("only", server.tools.include),
                                                ("not", server.tools.exclude)) if v]
    return "; ".join(parts) or "all"


@app.command("add")
def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The server's name (its tools: mcp_NAME_TOOL)."),
    command: list[str] = typer.Argument(None, help="After --: the command that serves MCP "
                                                   "on stdio, and its arguments."),
    url: str = typer.Option(None, "--url", help="A streamable HTTP endpoint instead."),
    header: list[str] = typer.Option([], "--header", help="'Name: value' sent to an HTTP "
                                     "server; credentials by reference: "
                                     "'Authorization: Bearer ${secret:NAME}'."),
    env: list[str] = typer.Option([], "--env", help="NAME=value for the command, or NAME "
                                  "alone to pass the secret NAME from .env."),
    include: list[str] = typer.Option([], "--include", help="Only this tool (repeatable)."),
    exclude: list[str] = typer.Option([], "--exclude", help="Never this tool (repeatable)."),
    timeout: float = typer.Option(None, "--timeout", help="Seconds a tool call may take."),
    connect_timeout: float = typer.Option(None, "--connect-timeout",
                                          help="Seconds the server may take to start."),
    disabled: bool = typer.Option(False, "--disabled", help="Add it switched off."),
    force: bool = typer.Option(False, "--force", help="Replace a server of this name."),
) -> None:
    """Add an MCP server to the profile's config.yaml (checked before it is written)."""
    from hermes.mcp.manage import NewServer
    from hermes.mcp.manage import add as add_server

    st = state(ctx)
    server = NewServer(list(command or []), url, header, env, include, exclude, timeout,
                       connect_timeout, not disabled)
    where = add_server(st.home(), st.environ, name, server, replace=force)
    out(f"added MCP server {name} to {where}; new sessions get its tools (restart a running "
        f"gateway); check it with `hermes mcp test {name}`")


@app.command("remove")
def remove(ctx: typer.Context, name: str = typer.Argument(..., help="The server's name.")
           ) -> None:
    """Remove an MCP server from the profile's config.yaml."""
    from hermes.mcp.manage import remove as remove_server

    st = state(ctx)
    where = remove_server(st.home(), st.environ, name)
    out(f"removed MCP server {name} from {where}")


@app.command("test")
def test(ctx: typer.Context, name: str = typer.Argument(..., help="The server's name.")
         ) -> None:
    """Start server NAME here (even when disabled), list its tools, stop it."""
    from hermes.mcp.base import TASK_ONLY
    from hermes.mcp.manage import probe
    from hermes.mcp.tools import offered_to_model, tool_name

    st = state(ctx)
    spec, listing = probe(st.home(), st.environ, name)
    out(f"{name}: {spec.transport} {spec.describe()}: started in {listing.seconds:.2f} s, "
        f"{len(listing.tools)} tool{'s' if len(listing.tools) != 1 else ''}")
    for tool in listing.tools:
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        mark = "" if offered_to_model(spec, tool) else \
            f"  ({TASK_ONLY})" if tool.task_only else "  (filtered out)"
        out(f"  {tool_name(name, tool.name)}{mark}  {summary}".rstrip())


@app.command("serve")
def serve(
    ctx: typer.Context,
    http: bool = typer.Option(False, "--http", help="Streamable HTTP instead of stdio; "
                              "clients send Authorization: Bearer MCP_SERVER_KEY."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address for --http (loopback by "
                             "default; the key is required on any address)."),
    port: int = typer.Option(8650, "--port", help="Port for --http (0: any free port)."),
    overrides: list[str] = typer.Argument(None, help="Config overrides (key=value)."),
) -> None:
    """Serve this profile to MCP clients (Claude Code, Cursor, Codex, ...): list, read and
    search its sessions, ask the agent, answer its approvals. stdio by default."""
    from hermes.config import compose_config
    from hermes.mcp.serve import build_server
    from hermes.mcp.serve_run import bearer_key, listen, profile_access, serve_http, serve_stdio

    st = state(ctx)
    home = st.home()
    key = bearer_key(home, st.environ) if http else None
    composed = compose_config(home, st.environ, overrides or [])
    home.ensure()
    server = build_server(lambda: profile_access(home, composed.config, st.environ,
                                                 composed.raw), home.name)
    if key is None:
        serve_stdio(server)
        return
    sock = listen(host, port)
    address, bound = sock.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    sys.stderr.write(f"serving profile {home.name} over MCP at http://{shown}:{bound}/mcp "
                     f"(Authorization: Bearer <MCP_SERVER_KEY>)\n")
    sys.stderr.flush()
    serve_http(server, key, sock)
