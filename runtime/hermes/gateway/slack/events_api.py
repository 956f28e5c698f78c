"""The Events API: Slack posts events, slash commands and button clicks to the gateway's
HTTP listener, at ``/slack/<platform name>/``; Bolt's ``AsyncApp`` checks each request's
signature (the signing secret; at most five minutes old), answers the URL verification
challenge and runs the same listeners as Socket Mode. Bodies are read within the
listener's limits (``max_body_bytes``)."""

from __future__ import annotations

import logging
from typing import Any

from hermes.gateway.api_server.body import BodyLimits, Receive, Scope, Send, limit_bodies

PREFIX = "/slack/"


class EventsEndpoint:
    """The ASGI app of one platform's Events API path."""

    def __init__(self, bolt: Any, limits: BodyLimits, log: logging.Logger):
        self.bolt = bolt
        """The platform's ``AsyncApp`` (its signing secret set): replaced on reconnect."""
        self._limited = limit_bodies(self._request, limits, log)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await _answer(send, 405, b"only POST", [])
            return
        await self._limited(scope, receive, send)

    async def _request(self, scope: Scope, receive: Receive, send: Send) -> None:
        from slack_bolt.request.async_request import AsyncBoltRequest

        message = await receive()
        body = bytes(message.get("body", b"")).decode("utf-8", "replace")
        headers: dict[str, Any] = {}
        for name, value in scope.get("headers", []):
            headers.setdefault(name.decode("latin-1").lower(), []).append(
                value.decode("latin-1"))
        query = scope.get("query_string", b"").decode("latin-1")
        response = await self.bolt.async_dispatch(AsyncBoltRequest(
            body=body, query=query, headers=headers))
        pairs = [(name.encode("latin-1"), str(value).encode("latin-1"))
                 for name, values in response.headers.items() for value in values]
        await _answer(send, response.status, (response.body or "").encode(), pairs)


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
                  ) -> None:
    headers = [h for h in headers if h[0] != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
