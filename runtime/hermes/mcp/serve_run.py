"""Running ``hermes mcp serve``: the profile's runtime behind the MCP server, over stdio
or over streamable HTTP, where every request must carry the profile's bearer key
(``MCP_SERVER_KEY`` in its ``.env``) and the server binds to loopback unless told
otherwise.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import socket
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hermes.config.schema import HermesConfig
from hermes.credentials import Secrets
from hermes.errors import UserError
from hermes.home import Home
from hermes.mcp.profile_access import ProfileAccess

KEY_NAME = "MCP_SERVER_KEY"
MIN_KEY_CHARS = 16
PATH = "/mcp"
KEY_FIX = f'set one with `hermes config set {KEY_NAME} "$(openssl rand -hex 24)"`'

Asgi = Callable[..., Any]


@contextlib.contextmanager
def profile_access(home: Home, config: HermesConfig, environ: Mapping[str, str],
                   raw: Mapping[str, Any] | None = None) -> Iterator[ProfileAccess]:
    """The profile's runtime, started, as the MCP tools use it; stopped on exit. A
    provider without its key refuses only ``ask`` (the session tools need none)."""
    from hermes.container import open_runtime
    from hermes.mcp.approvals import PendingApprovals
    from hermes.redact import build_redactor

    redact = build_redactor(home.env_file, environ, config.secrets.environment_files)
    with contextlib.closing(open_runtime(home, config, environ, raw=raw,
                                         require_key=False)) as runtime:
        approvals = PendingApprovals(config.approvals.chat_timeout)
        yield ProfileAccess(runtime.container.sessions(), runtime.container.conversations,
                            approvals, redact)


def bearer_key(home: Home, environ: Mapping[str, str]) -> str:
    """The profile's ``MCP_SERVER_KEY``; a ``UserError`` saying how to set one."""
    key = Secrets(home.env_file, environ).get(KEY_NAME)
    if not key:
        raise UserError(f"--http needs a bearer key and profile {home.name} has none: "
                        f"{KEY_FIX}; MCP clients send it as `Authorization: Bearer KEY`")
    if len(key) < MIN_KEY_CHARS:
        raise UserError(f"{KEY_NAME} is shorter than {MIN_KEY_CHARS} characters: {KEY_FIX}")
    return key


def require_bearer(app: Asgi, key: str) -> Asgi:
    """``app`` answering only HTTP requests with ``Authorization: Bearer <key>``."""
    expected = key.encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not _authorized(scope, expected):
            await _unauthorized(send)
            return
        await app(scope, receive, send)

    return guarded


def _authorized(scope: dict[str, Any], expected: bytes) -> bool:
    header = dict(scope.get("headers") or []).get(b"authorization", b"")
    scheme, _, given = header.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), expected)


async def _unauthorized(send: Any) -> None:
    body = json.dumps({"error": f"missing or wrong key: send Authorization: Bearer <key> "
                                f"({KEY_NAME} in the profile's .env)"}).encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (0: any free port); ``UserError`` if taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror}) — pick another "
                        "port with --port") from None
    sock.listen(128)  # clients wait in the backlog while the runtime starts
    return sock


def serve_http(server: Any, key: str, sock: socket.socket) -> None:
    """Serve ``server`` on ``sock`` until SIGINT or SIGTERM (a clean stop: exit 0)."""
    import signal

    import anyio
    import uvicorn

    # uvicorn stops gracefully, then raises the signal again with the handler it found.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    host = sock.getsockname()[0]
    app = require_bearer(server.streamable_http_app(streamable_http_path=PATH, host=host), key)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


def serve_stdio(server: Any) -> None:
    """Serve ``server`` on standard input and output until the client closes them."""
    import anyio

    anyio.run(server.run_stdio_async)
