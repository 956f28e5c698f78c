"""Request bodies as they arrive: counted against the limit, cut off when they stall.

An ASGI wrapper reads each request's whole body before the app sees any of it, so no
route, model call or session ever holds more than ``max_body_bytes``:

- a ``Content-Length`` past the limit is answered 413 before a byte is read;
- any body (chunked ones carry no length) is counted as it arrives and answered 413
  once past the limit;
- a body not whole within ``read_timeout`` seconds of its first read is answered 408 (the
  deadline is for the whole body: a byte now and then does not renew it);
- a client that hangs up mid-body is one line in the log.

413 and 408 close the connection: the rest of the body is never read.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from hermes.gateway.api_server.wire import WireError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class BodyLimits:
    """What one listener allows a request body (the strictest of the profiles it serves)."""

    max_bytes: int
    read_timeout: float
    setting: str = "settings.max_body_bytes of the api_server platform"
    """The config key of ``max_bytes``, named when a body is refused."""

    def tighten(self, max_bytes: int, read_timeout: float) -> None:
        self.max_bytes = min(self.max_bytes, max_bytes)
        self.read_timeout = min(self.read_timeout, read_timeout)


class _HungUp(Exception):
    """The client closed the connection before its body was complete."""

    def __init__(self, received: int):
        super().__init__(received)
        self.received = received


def limit_bodies(app: App, limits: BodyLimits, log: logging.Logger) -> App:
    """``app`` behind the body limits; it gets each body whole, as one message."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        try:
            body = await _read_body(scope, receive, limits)
        except WireError as exc:
            _note(log, exc.message, scope)
            return await refuse(exc, send)
        except _HungUp as exc:
            _note(log, "client hung up mid-body", scope, received=exc.received)
            return None
        return await app(scope, _replay(body, receive), send)

    return limited


async def _read_body(scope: Scope, receive: Receive, limits: BodyLimits) -> bytes:
    if _declared_length(scope) > limits.max_bytes:
        raise _too_large(limits)
    chunks: list[bytes] = []
    size = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limits.read_timeout
    while True:
        try:
            message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0.0))
        except TimeoutError:
            raise WireError(408, f"the request body did not arrive whole within "
                                 f"{limits.read_timeout:g} s", code="request_timeout") from None
        if message["type"] == "http.disconnect":
            raise _HungUp(size)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limits.max_bytes:
            raise _too_large(limits)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _declared_length(scope: Scope) -> int:
    """The ``Content-Length`` header, 0 without one (the server refuses malformed ones)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return 0


def _too_large(limits: BodyLimits) -> WireError:
    return WireError(413, f"the request body is over the limit of {limits.max_bytes} bytes "
                          f"({limits.setting})",
                     code="request_too_large")


async def refuse(error: WireError, send: Send) -> None:
    """Answer ``error`` and close the connection (a body that was not read stays unread)."""
    body = json.dumps(error.body()).encode()
    await send({"type": "http.response.start", "status": error.status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})  # the rest of the body is never read
    await send({"type": "http.response.body", "body": body})


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body as one message, then the server's own messages (a disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def _note(log: logging.Logger, event: str, scope: Scope, **fields: Any) -> None:
    client = scope.get("client") or ("?", 0)
    log.info(event, extra={"fields": {"client": f"{client[0]}:{client[1]}",
                                      "path": scope.get("path"), **fields}})
