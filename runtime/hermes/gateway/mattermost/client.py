"""The bot's side of a Mattermost server: REST API v4 and the WebSocket, over aiohttp.

aiohttp is imported only here, when the platform starts. Answers are translated at this
boundary into what the messaging core acts on: ``AccessDenied`` (the server refuses the
token: 401, or 403/404 from ``/users/me``), ``RetryAfter`` (429, with its
``Retry-After`` or ``X-Ratelimit-Reset`` seconds), ``Disconnected`` (no answer, a 5xx,
or a token refused mid-run: the reconnect then finds out) and ``Rejected`` (this post
is refused for good: a channel gone, a post too long).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from hermes.agent.attachments import ImageRefused
from hermes.gateway.images import read_capped, too_large, unreadable
from hermes.gateway.messaging.aiohttp_errors import disconnected_on_errors
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter

JSON = dict[str, Any]
DEFAULT_RETRY_AFTER = 1.0
HEARTBEAT = 30.0
"""Seconds between WebSocket pings: a connection that stops answering is noticed."""
CHUNK = 64 * 1024


class MattermostClient:
    """One token on one server (one aiohttp session, re-made after ``close``)."""

    def __init__(self, url: str, token: str, key: str):
        self.url = url.rstrip("/")
        self.token = token
        self.key = key
        """Where the token is configured (``platforms.enabled.<name>.token``), for the fix."""
        self._session: Any = None
        self.connection_id = ""
        """The WebSocket connection to resume (from its ``hello`` event)."""
        self.sequence = 0
        """The sequence number of the last event read on it."""

    async def me(self) -> JSON:
        """The account the token belongs to (``GET /users/me``)."""
        try:
            return await self._call("GET", "/users/me")
        except Rejected as exc:  # a 403/404 here: not a token this server takes
            raise AccessDenied(f"{self.url} refused the token ({exc}) — check the secret "
                               f"{self.key} names") from None

    async def post(self, channel_id: str, message: str, root_id: str = "") -> JSON:
        """Create a post; channel-wide mentions (@all, @channel, @here) notify nobody."""
        return await self._call("POST", "/posts", {
            "channel_id": channel_id, "message": message, "root_id": root_id,
            "props": {"disable_group_highlight": True}})

    async def typing(self, channel_id: str, parent_id: str = "") -> None:
        await self._call("POST", "/users/me/typing", {"channel_id": channel_id,
                                                      "parent_id": parent_id})

    async def file(self, file_id: str, name: str, max_bytes: int) -> bytes:
        """A file's bytes (``GET /files/{id}``), refused once past ``max_bytes``."""
        import aiohttp

        try:
            async with self._ensure_session().get(self._api(f"/files/{file_id}")) as response:
                if response.status != 200:
                    raise unreadable(name, "Mattermost", f"HTTP {response.status}")
                if response.content_length is not None and response.content_length > max_bytes:
                    raise ImageRefused(too_large(name, max_bytes, response.content_length))
                return await read_capped(response.content.iter_chunked(CHUNK), max_bytes, name)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise unreadable(name, "Mattermost", f"{type(exc).__name__}: {exc}") from None

    async def events(self) -> AsyncIterator[JSON]:
        """The WebSocket's events, once it took the token (``authentication_challenge``);
        ends (or raises ``ConnectionError``) when the connection is lost. A connection made
        again resumes the last one (``connection_id`` and the next ``sequence_number``):
        the server then sends the events it missed, if it still has them."""
        import aiohttp

        resume = {"connection_id": self.connection_id,
                  "sequence_number": str(self.sequence + 1)} if self.connection_id else {}
        with disconnected_on_errors("websocket"):
            socket = await self._ensure_session().ws_connect(
                self._api("/websocket").replace("http", "ws", 1), heartbeat=HEARTBEAT,
                params=resume)
        try:
            await socket.send_json({"seq": 1, "action": "authentication_challenge",
                                    "data": {"token": self.token}})
            async for message in socket:
                if message.type != aiohttp.WSMsgType.TEXT:
                    break
                event = json.loads(message.data)
                if event.get("seq_reply") == 1 and event.get("status") != "OK":
                    raise ConnectionError(f"the WebSocket refused the token: {event}")
                if isinstance(event, dict) and "event" in event:
                    self._count(event)
                    yield event
        finally:
            await socket.close()
        raise ConnectionError(f"the WebSocket closed ({socket.close_code})")

    def _count(self, event: JSON) -> None:
        """Note the connection an event came on and its sequence number."""
        seq = event.get("seq")
        if event.get("event") == "hello":
            found = str((event.get("data") or {}).get("connection_id") or "")
            if found != self.connection_id:  # a new connection: nothing was resumed
                self.connection_id = found
                self.sequence = seq if isinstance(seq, int) else 0
        elif isinstance(seq, int):
            self.sequence = seq

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def _call(self, method: str, path: str, body: JSON | None = None) -> JSON:
        with disconnected_on_errors(f"{method} {path}"):
            async with self._ensure_session().request(method, self._api(path),
                                                      json=body) as response:
                if response.status >= 400:
                    _refuse(response.status, response.headers, await response.text(),
                            self.url, self.key)
                answer = await response.json(content_type=None)
        return answer if isinstance(answer, dict) else {}

    def _api(self, path: str) -> str:
        return f"{self.url}/api/v4{path}"

    def _ensure_session(self) -> Any:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=60, sock_connect=10),
                headers={"Authorization": f"Bearer {self.token}",
                         "User-Agent": "hermes-runtime"})
        return self._session


def _refuse(status: int, headers: Any, text: str, url: str, key: str) -> None:
    """Raise what an HTTP error means here."""
    message = _message(text) or f"HTTP {status}"
    if status == 429:
        raise RetryAfter(retry_after(headers))
    if status == 401:
        raise AccessDenied(f"{url} rejected the token ({message}) — check the secret {key} "
                           "names")
    if status >= 500:
        raise Disconnected(f"HTTP {status}: {message}")
    raise Rejected(f"HTTP {status}: {message}")


def retry_after(headers: Any) -> float:
    """Seconds a 429 asks to wait: ``Retry-After``, else ``X-Ratelimit-Reset`` (seconds
    until the limit resets), else a second."""
    for name in ("Retry-After", "X-Ratelimit-Reset"):
        with contextlib.suppress(TypeError, ValueError):
            return max(float(headers.get(name)), 0.0)
    return DEFAULT_RETRY_AFTER


def _message(text: str) -> str:
    """The ``message`` of Mattermost's error body (``{"id", "message", ...}``)."""
    with contextlib.suppress(ValueError):
        body = json.loads(text)
        if isinstance(body, dict):
            return str(body.get("message") or "")
    return text[:200]
