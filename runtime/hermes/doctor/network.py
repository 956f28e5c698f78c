"""Is it answering? The provider's endpoint, the docker daemon, an ssh server.

Standard library only, short timeouts, nothing sent but a bare request: no key,
no prompt.
"""

from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

TIMEOUT = 3.0
# Where litellm sends requests for these providers when no api_base is set.
KNOWN_BASES = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "openrouter": "https://openrouter.ai/api/v1",
    "ollama": "http://127.0.0.1:11434",
    "ollama_chat": "http://127.0.0.1:11434",
}


def provider_base(provider: str, api_base: str | None) -> str | None:
    """The URL requests go to: ``api_base``, else the provider's known base, else None."""
    return api_base or KNOWN_BASES.get(provider)


def endpoint_answers(url: str, timeout: float = TIMEOUT) -> str | None:
    """None if an HTTP server answers at ``url`` (any status), else why not."""
    request = urllib.request.Request(url, method="GET", headers={"User-Agent": "hermes-doctor"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # 401, 404...: the server is there
    except urllib.error.URLError as exc:
        return _reason(exc.reason)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return _reason(exc)


def _reason(reason: object) -> str:
    if isinstance(reason, socket.gaierror):
        return "cannot resolve the host name (offline?)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"no answer within {TIMEOUT:g} s"
    return str(getattr(reason, "strerror", None) or reason)


def ssh_answers(host: str | None, port: int, timeout: float = TIMEOUT) -> str | None:
    """None if an SSH server greets on ``host:port``, else why not."""
    if not host:
        return "environment.ssh.host is not set"
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            greeting = sock.recv(64)
    except OSError as exc:
        return _reason(exc)
    return None if greeting.startswith(b"SSH-") else "something answers, but not an SSH server"


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
