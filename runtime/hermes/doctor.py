"""Health checks behind ``hermes doctor``. Imports neither litellm nor docker."""

from __future__ import annotations

import http.client
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from hermes.errors import ConfigError
from hermes.fsutil import file_mode
from hermes.home import Home

Status = Literal["ok", "warn", "fail"]
COMPROMISED = {"litellm": {"1.82.7", "1.82.8"}}
DISTRIBUTION = "hermes-runtime"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def check_home(home: Home) -> list[Check]:
    if not home.path.exists():
        return [Check("home", "warn", f"{home.path} does not exist yet",
                      "it is created on first use, or `hermes profile create NAME`")]
    checks = []
    mode = file_mode(home.path)
    checks.append(Check("home permissions", "fail" if mode & 0o022 else "ok",
                        f"{home.path} is {oct(mode)}", f"chmod 700 {home.path}" if mode & 0o022
                        else ""))
    for secret_file in (home.env_file, home.sessions_db):
        if secret_file.exists():
            mode = file_mode(secret_file)
            checks.append(Check(f"{secret_file.name} permissions", "fail" if mode & 0o077 else "ok",
                                oct(mode), f"chmod 600 {secret_file}" if mode & 0o077 else ""))
    missing = [d.name for d in (home.memories_dir, home.skills_dir, home.logs_dir)
               if not d.is_dir()]
    checks.append(Check("home layout", "warn" if missing else "ok",
                        f"missing: {', '.join(missing)}" if missing else "memories, skills, logs",
                        f"mkdir -p {' '.join(str(home.path / m) for m in missing)}"
                        if missing else ""))
    return checks


def check_dependencies() -> list[Check]:
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return [Check("dependencies", "fail", f"{DISTRIBUTION} is not installed",
                      "uv sync --frozen")]
    problems = []
    for requirement in requirements:
        match = re.match(r"([A-Za-z0-9_.\-]+)==([^;\s]+)", requirement)
        if not match or "extra ==" in requirement:
            continue
        name, pinned = match.groups()
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} missing")
            continue
        if installed in COMPROMISED.get(name.lower(), set()):
            problems.append(f"{name} {installed} is a compromised release")
        elif installed != pinned:
            problems.append(f"{name} {installed} != {pinned}")
    if problems:
        return [Check("dependencies", "fail", "; ".join(problems), "uv sync --frozen")]
    return [Check("dependencies", "ok", f"{len(requirements)} pinned packages match")]


def check_config(home: Home, environ: Mapping[str, str], overrides: list[str]) -> list[Check]:
    from hermes.config import compose_config

    try:
        composed = compose_config(home, environ, overrides)
    except ConfigError as exc:
        return [Check("config", "fail", str(exc), "hermes config explain KEY / hermes config edit")]
    config = composed.config
    checks = [Check("config", "ok", f"provider {config.provider.name}, "
                    f"model {config.provider.model}, environment {config.environment.kind}")]
    missing = missing_api_key(composed)
    if missing:
        checks.append(Check("provider credentials", "fail", f"{missing} is not set",
                            f"hermes config set {missing} <your key>"))
    else:
        checks.append(Check("provider credentials", "ok", "key present"
                            if config.provider.requires_key else "no key needed"))
    docker = docker_ping(environ)
    needed = config.environment.kind == "docker"
    checks.append(Check("docker", "ok" if docker is None else ("fail" if needed else "warn"),
                        "reachable" if docker is None else docker,
                        "" if docker is None else "start dockerd, or set DOCKER_HOST"))
    return checks


def missing_api_key(composed: Any) -> str | None:
    """The name of the secret the provider needs but does not have, else None."""
    provider = composed.config.provider
    if not provider.requires_key or provider.api_key:
        return None
    ref = str(composed.raw.get("provider", {}).get("api_key") or "")
    return ref[len("${secret:"):-1] if ref.startswith("${secret:") else "PROVIDER_API_KEY"


def docker_ping(environ: Mapping[str, str] | None = None) -> str | None:
    """``None`` if the docker daemon answers ``/_ping``, else why not (stdlib only)."""
    host = (environ or {}).get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        return f"DOCKER_HOST={host} is not a unix socket; not checked"
    path = Path(host[len("unix://"):])
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(2)
        sock.connect(str(path))
        conn = http.client.HTTPConnection("localhost", timeout=2)
        conn.sock = sock
        conn.request("GET", "/_ping")
        ok = conn.getresponse().status == 200
        conn.close()
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None if ok else f"{path}: unexpected answer"


def run_checks(home: Home, environ: Mapping[str, str], overrides: list[str]) -> list[Check]:
    return check_home(home) + check_dependencies() + check_config(home, environ, overrides)
