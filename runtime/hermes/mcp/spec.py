"""A configured server as a connection needs it: plain values, secrets resolved, the
command's whole environment spelled out, so the same spec starts the same server in
this process or in the warm server's broker (which keys running servers by it)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

from hermes.config.mcp_schema import McpServerConfig

INHERITED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "SHELL",
             "TMPDIR")
"""Variables of ours a stdio server gets (besides ``XDG_*`` and its ``env``): enough to
run, nothing secret."""


@dataclass(frozen=True)
class ServerSpec:
    """One enabled server, ready to connect."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """The command's whole environment."""
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 120.0
    connect_timeout: float = 30.0
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """Where it is, without secrets (header names only)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)

    @cached_property
    def fingerprint(self) -> str:
        """What identifies a running server: the same process or endpoint, spoken to
        with the same environment or headers."""
        what = [self.command, self.args, sorted(self.env.items()), self.cwd, self.url,
                sorted(self.headers.items())]
        return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:32]

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ServerSpec:
        tuples = {key: tuple(data[key]) for key in ("args", "include", "exclude")}
        return cls(**(data | tuples))


def server_specs(servers: Mapping[str, McpServerConfig], environ: Mapping[str, str],
                 cwd: str | None = None) -> tuple[list[ServerSpec], list[str]]:
    """``(specs of the enabled servers, problems)``: a server whose settings cannot be
    used (an unset secret) is left out with a one-line problem naming its key."""
    specs: list[ServerSpec] = []
    problems: list[str] = []
    for name, settings in servers.items():
        if not settings.enabled:
            continue
        unset = [f"mcp_servers.{name}.{part}.{key}" for part in ("env", "headers")
                 for key, value in getattr(settings, part).items() if value is None]
        if unset:
            problems.append(f"{unset[0]}: the secret it refers to is not set (in .env or "
                            "the environment) — set it with `hermes config set NAME VALUE`")
            continue
        specs.append(spec_of(name, settings, environ, cwd or os.getcwd()))
    return specs, problems


def spec_of(name: str, settings: McpServerConfig, environ: Mapping[str, str],
            cwd: str) -> ServerSpec:
    common: dict[str, Any] = {"timeout": settings.timeout,
                              "connect_timeout": settings.connect_timeout,
                              "include": tuple(settings.tools.include),
                              "exclude": tuple(settings.tools.exclude)}
    if settings.url is not None:
        headers = {k: v for k, v in settings.headers.items() if v is not None}
        return ServerSpec(name, url=settings.url, headers=headers, **common)
    env = {k: v for k, v in environ.items() if k in INHERITED or k.startswith("XDG_")}
    env |= {k: v for k, v in settings.env.items() if v is not None}
    return ServerSpec(name, command=settings.command, args=tuple(settings.args), env=env,
                      cwd=os.path.expanduser(settings.cwd) if settings.cwd else cwd, **common)
