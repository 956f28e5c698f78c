"""What ``hermes mcp list | add | remove | test`` do with a profile's ``mcp_servers``.

``add`` and ``remove`` edit the profile's own ``config.yaml`` (comments kept, the result
validated before it is written); a credential is never written there: a header or a
secret-named variable must refer to ``.env`` (``${secret:NAME}``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes.config.mcp_schema import McpServerConfig
from hermes.credentials import is_secret_name
from hermes.errors import ConfigError, UserError, did_you_mean, one_of
from hermes.home import Home

CREDENTIAL_HEADER = re.compile(r"authorization|.*(?:token|key|secret|password|cookie).*",
                               re.IGNORECASE)
"""Headers that carry credentials: their values must come from ``.env``."""
SECRET_REF = "${secret:"


@dataclass
class NewServer:
    """What ``hermes mcp add`` was told."""

    command: list[str] = field(default_factory=list)
    url: str | None = None
    headers: list[str] = field(default_factory=list)
    """``Name: value`` lines."""
    env: list[str] = field(default_factory=list)
    """``NAME=value``, or ``NAME`` for ``${secret:NAME}``."""
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    timeout: float | None = None
    connect_timeout: float | None = None
    enabled: bool = True

    def entry(self) -> dict[str, Any]:
        """The ``mcp_servers.NAME`` mapping to write (only what was given)."""
        if bool(self.command) == bool(self.url):
            raise UserError("give the server's command after -- (a stdio server) or --url "
                            "URL (a streamable HTTP server): `hermes mcp add NAME -- npx -y "
                            "@modelcontextprotocol/server-filesystem ~/notes`")
        entry: dict[str, Any] = ({"command": self.command[0], "args": self.command[1:]}
                                 if self.command else {"url": self.url})
        optional = {"headers": parse_headers(self.headers), "env": parse_env(self.env),
                    "tools": {k: v for k, v in (("include", self.include),
                                                ("exclude", self.exclude)) if v},
                    "timeout": self.timeout, "connect_timeout": self.connect_timeout,
                    "enabled": None if self.enabled else False}
        return entry | {k: v for k, v in optional.items() if v not in (None, {}, [])}


def parse_headers(lines: Sequence[str]) -> dict[str, str]:
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise UserError(f"--header {line!r}: write it as 'Name: value'")
        name, value = name.strip(), value.strip()
        if CREDENTIAL_HEADER.fullmatch(name) and SECRET_REF not in value:
            raise UserError(f"--header {name}: a credential is not written into config.yaml "
                            f"— store it with `hermes config set MY_TOKEN VALUE` and write "
                            f"--header '{name}: Bearer ${{secret:MY_TOKEN}}'")
        headers[name] = value
    return headers


def parse_env(items: Sequence[str]) -> dict[str, str]:
    env = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UserError(f"--env {item!r}: write NAME=value, or NAME to pass the secret "
                            "NAME from .env")
        if not sep:
            value = f"{SECRET_REF}{name}}}"
        elif is_secret_name(name) and SECRET_REF not in value:
            raise UserError(f"--env {name}: a secret is not written into config.yaml — store "
                            f"it with `hermes config set {name} VALUE` and pass --env {name}")
        env[name] = value
    return env


def configured(home: Home, environ: Mapping[str, str]) -> tuple[dict[str, McpServerConfig],
                                                                  dict[str, Any]]:
    """``(servers, display)``: the composed ``mcp_servers`` and the same with secrets
    redacted (for showing)."""
    from hermes.config import compose_config

    composed = compose_config(home, environ)
    return dict(composed.config.mcp_servers), dict(composed.display.get("mcp_servers") or {})


def unset_secrets(shown: Mapping[str, Any]) -> list[str]:
    """Secrets a server's ``env`` or ``headers`` refer to that are not set, from its
    displayed settings (where an unset ``${secret:NAME}`` reads ``<unset: NAME>``)."""
    values = [*(shown.get("env") or {}).values(), *(shown.get("headers") or {}).values()]
    return sorted({name for value in values if isinstance(value, str)
                   for name in re.findall(r"<unset: ([^>]+)>", value)})


def find(servers: Mapping[str, Any], name: str) -> Any:
    if name not in servers:
        raise UserError(f"no MCP server {name!r} in this profile{did_you_mean(name, servers)} "
                        f"(configured: {one_of(servers)}); add one with `hermes mcp add "
                        f"{name} -- COMMAND ARGS` or `--url URL`")
    return servers[name]


def add(home: Home, environ: Mapping[str, str], name: str, server: NewServer,
        replace: bool = False) -> str:
    """Write ``mcp_servers.NAME``; the file written."""
    from hermes.config.edit import set_paths
    from hermes.config.mcp_schema import SERVER_NAME

    if not SERVER_NAME.fullmatch(name):
        raise UserError(f"{name!r} is not a server name: letters, digits, - and _ (at most "
                        "32, starting with a letter or digit)")
    entry = server.entry()
    if name in configured(home, environ)[0] and not replace:
        raise UserError(f"MCP server {name} already exists — `hermes mcp remove {name}` first, "
                        "or add --force to replace it")
    return set_paths(home, {f"mcp_servers.{name}": entry}, environ).where


def remove(home: Home, environ: Mapping[str, str], name: str) -> str:
    from hermes.config.edit import unset_value

    find(configured(home, environ)[0], name)
    try:
        return unset_value(home, f"mcp_servers.{name}", environ).where
    except ConfigError as exc:
        raise ConfigError(f"{name} is not set in this profile's config.yaml but in a layer "
                          "below it (see `hermes config explain mcp_servers`); disable it "
                          f"with `hermes config set mcp_servers.{name}.enabled false`",
                          source=str(home.config_file), key=f"mcp_servers.{name}") from exc


def probe(home: Home, environ: Mapping[str, str], name: str) -> tuple[Any, Any]:
    """``(spec, listing)`` of server NAME, connected in this process (even when it is
    disabled) and stopped again; ``McpError`` when it cannot start."""
    from hermes.errors import McpError
    from hermes.mcp.broker import forget_failure
    from hermes.mcp.service import start_servers
    from hermes.mcp.spec import server_specs

    servers, display = configured(home, environ)
    settings = find(servers, name)
    unset = unset_secrets(display.get(name, {}))
    specs, problems = server_specs({name: settings.model_copy(update={"enabled": True})},
                                   environ)
    if unset:
        raise ConfigError(f"refers to {', '.join(unset)}, which is not set — `hermes config "
                          f"set {unset[0]} VALUE`", key=f"mcp_servers.{name}")
    if problems:
        raise ConfigError(problems[0])
    service = start_servers(home, environ, specs, [], shared=False)
    try:
        listing = service.listings()[0]
    finally:
        service.close()
    if listing.error is not None:
        raise McpError(f"MCP server {name} ({specs[0].describe()}) failed: {listing.error}"
                       + stderr_note(home, environ, listing.stderr))
    forget_failure(home, name)
    return specs[0], listing


def stderr_note(home: Home, environ: Mapping[str, str], lines: Sequence[str]) -> str:
    """The last lines a server wrote to stderr (secrets redacted), indented under the
    error; empty when it wrote none."""
    from hermes.redact import build_redactor

    if not lines:
        return ""
    redact = build_redactor(home.env_file, environ)
    return "\n  its stderr ended with:" + "".join(f"\n    {redact(line)}" for line in lines)
