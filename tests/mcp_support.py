"""Helpers for the MCP tests: the sample MCP server (``mcp_sample_server.py``, written with
the official SDK) configured over stdio or started over HTTP, profiles pointing at the
fake LLM with ``mcp_servers``, and whether a server process still runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from conftest import wait_until
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.home import home_from_path

SAMPLE = Path(__file__).resolve().parent / "mcp_sample_server.py"
FAKE_KEY = "sk-fake-test-key-1234"


def stdio_sample(starts: Path | None = None, **settings: Any) -> dict[str, Any]:
    """``mcp_servers.<name>`` for the sample server over stdio; ``starts`` collects the
    pid of every start."""
    env = {"SAMPLE_STARTS": str(starts)} if starts else {}
    return {"command": sys.executable, "args": [str(SAMPLE)],
            "env": env | settings.pop("env", {}), **settings}


def write_profile(home: Path, llm_url: str, servers: dict[str, Any],
                  secrets: dict[str, str] | None = None, **extra: Any) -> None:
    """A home whose model is the fake LLM and whose config names ``servers``."""
    home.mkdir(parents=True, exist_ok=True)
    config = {"defaults": [{"override provider": "custom"}],
              "provider": {"model": "gpt-4o", "api_base": llm_url, "retry_backoff": 0,
                           "max_retries": 1, "timeout": 30},
              "mcp_servers": servers, **extra}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    lines = [f"CUSTOM_API_KEY={FAKE_KEY}", *(f"{k}={v}" for k, v in (secrets or {}).items())]
    (home / ".env").write_text("\n".join(lines) + "\n")
    (home / ".env").chmod(0o600)


def runtime_of(home: Path, environ: dict[str, str], *overrides: str) -> Runtime:
    hermes_home = home_from_path(home).ensure()
    config = compose_config(hermes_home, environ, list(overrides)).config
    return build_runtime(hermes_home, config, environ)


def starts(path: Path) -> list[int]:
    """Pids the sample server recorded, one per start."""
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_gone(pid: int, what: str) -> None:
    wait_until(lambda: not running(pid), timeout=30, what=what)


@contextmanager
def http_sample(directory: Path, token: str | None = None) -> Iterator[str]:
    """The sample server over streamable HTTP on a free loopback port; its URL."""
    port_file = directory / "sample-http.port"
    env = {k: v for k, v in os.environ.items() if k != "SAMPLE_HTTP_TOKEN"}
    env |= {"SAMPLE_HTTP_TOKEN": token} if token else {}
    with (directory / "sample-http.log").open("w") as log:
        proc = subprocess.Popen([sys.executable, str(SAMPLE), "--http", str(port_file)],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: port_file.exists() or proc.poll() is not None, timeout=60,
                   what="the sample HTTP server's port")
        assert proc.poll() is None, (directory / "sample-http.log").read_text()
        yield f"http://127.0.0.1:{port_file.read_text()}/mcp"
    finally:
        proc.terminate()
        proc.wait(30)
