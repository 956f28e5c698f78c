"""A fake Mattermost server on loopback, for the mattermost platform's tests.

It speaks the REST API v4's shape (``Authorization: Bearer <token>``; ``GET
/api/v4/users/me``, ``POST /api/v4/posts``, ``POST /api/v4/users/me/typing``, ``GET
/api/v4/files/{id}``; errors as ``{"id", "message", "status_code"}``) and the WebSocket
(``/api/v4/websocket``: a ``hello`` event, the ``authentication_challenge`` answered
``{"status": "OK", "seq_reply": 1}``, then ``posted`` events in the real envelope: the
post as a JSON string, ``channel_type``, ``mentions`` as a JSON string, ``broadcast``,
``seq``). It records every call with its time, refuses posts over 16383 characters as
the server does, and returns scripted errors (429 with ``X-Ratelimit-Reset`` and
``Retry-After`` included). ``drop()`` cuts the WebSockets (a client may resume one:
``connection_id`` and ``sequence_number``, the events it missed sent first);
``stop()``/``start()`` restart it on the same port, with no connection to resume.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from chat_fake_support import LoopServer

MAX_POST = 16383


def new_id() -> str:
    """A Mattermost id: 26 lower-case letters and digits."""
    return uuid.uuid4().hex[:26]


@dataclass
class Call:
    method: str
    path: str
    body: Any
    status: int = 200
    at: float = field(default_factory=time.monotonic)


@dataclass
class Failure:
    method: str
    path: str
    status: int
    message: str
    headers: dict[str, str]
    times: int = 1


@contextmanager
def serving(token: str) -> Iterator[FakeMattermost]:
    server = FakeMattermost(token).start()
    try:
        yield server
    finally:
        server.stop()


class FakeMattermost(LoopServer):
    """One server with one bot account. ``push`` posts as a user; ``calls`` records
    requests; ``posts`` holds what the bot posted."""

    def __init__(self, token: str, username: str = "hermes"):
        super().__init__()
        self.token = token
        self.username = username
        self.bot_id = new_id()
        self.posts: list[dict[str, Any]] = []
        self.handed: dict[str, float] = {}
        """When each user's post (by id) first went out on a WebSocket (``time.monotonic``):
        with a reply's ``at``, the platform's time from message in to reply out."""
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.files: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._sockets: set[web.WebSocketResponse] = set()
        self.refuse_websockets = False
        """Answer WebSocket upgrades 503 while set."""
        self._connections: dict[str, Connection] = {}
        """Every connection since the server started, by id (those cut keep their
        missed events for a resume)."""

    # --- lifecycle -------------------------------------------------------------------

    def drop(self) -> None:
        """Close every WebSocket (the server stays up)."""
        self.run(self._close_sockets())

    @property
    def connected(self) -> int:
        """Authenticated WebSockets open now."""
        return len(self._sockets)

    # --- scripting -------------------------------------------------------------------

    def push(self, text: str, *, user_id: str, username: str = "ada", channel_id: str,
             channel_type: str = "D", root_id: str = "", mentions: list[str] | None = None,
             files: list[dict[str, Any]] | None = None) -> str:
        """A user's post, sent to the bot's WebSockets as a ``posted`` event; its id."""
        post = {"id": new_id(), "create_at": int(time.time() * 1000), "update_at": 0,
                "edit_at": 0, "delete_at": 0, "is_pinned": False, "user_id": user_id,
                "channel_id": channel_id, "root_id": root_id, "original_id": "",
                "message": text, "type": "", "props": {}, "hashtags": "",
                "pending_post_id": "", "file_ids": [f["id"] for f in files or []],
                "metadata": {"files": files} if files else {}}
        if mentions is None and f"@{self.username}" in text:
            mentions = [self.bot_id]
        data: dict[str, Any] = {"channel_display_name": "", "channel_name": channel_id,
                                "channel_type": channel_type, "post": json.dumps(post),
                                "sender_name": f"@{username}", "team_id": ""}
        if mentions:
            data["mentions"] = json.dumps(mentions)
        self.run(self._broadcast({"event": "posted", "data": data, "broadcast": {
            "omit_users": None, "user_id": "", "channel_id": channel_id, "team_id": ""}}))
        return str(post["id"])

    def file(self, data: bytes, name: str, mime: str) -> dict[str, Any]:
        """A file's info (as ``metadata.files`` carries it), its bytes served."""
        file_id = new_id()
        self.files[file_id] = data
        return {"id": file_id, "name": name, "mime_type": mime, "size": len(data),
                "extension": name.rpartition(".")[2]}

    def fail(self, method: str, path: str, status: int, message: str = "refused", *,
             headers: dict[str, str] | None = None, times: int = 1) -> None:
        """The next ``times`` calls of ``method path`` fail so."""
        with self._lock:
            self.failures.append(Failure(method, path, status, message, headers or {}, times))

    # --- what happened ---------------------------------------------------------------

    def sent(self, channel_id: str) -> list[dict[str, Any]]:
        """Posts the bot made in ``channel_id``."""
        with self._lock:
            return [p for p in self.posts if p["channel_id"] == channel_id]

    def texts(self, channel_id: str) -> list[str]:
        return [p["message"] for p in self.sent(channel_id)]

    def of(self, method: str, path: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method and c.path == path]

    # --- the server ------------------------------------------------------------------

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/v4/users/me", self._me)
        app.router.add_post("/api/v4/posts", self._post)
        app.router.add_post("/api/v4/users/me/typing", self._typing)
        app.router.add_get("/api/v4/files/{file_id}", self._file)
        app.router.add_get("/api/v4/websocket", self._websocket)

    async def closing(self) -> None:
        await self._close_sockets()
        self._connections.clear()  # a restarted server has no connections to resume

    async def _close_sockets(self) -> None:
        for connection in self._connections.values():
            socket, connection.socket = connection.socket, None
            if socket is not None:
                await socket.close()
        self._sockets.clear()

    async def _broadcast(self, event: dict[str, Any]) -> None:
        for connection in self._connections.values():
            connection.seq += 1
            numbered = event | {"seq": connection.seq}
            if connection.socket is not None:
                await self._hand(connection.socket, numbered)
            else:
                connection.missed.append(numbered)

    def _refusal(self, request: web.Request, body: Any) -> web.Response | None:
        """401 without the token; a scripted failure; else None (and the call recorded)."""
        path = request.path.removeprefix("/api/v4")
        status, failure = 200, None
        with self._lock:
            if request.headers.get("Authorization") != f"Bearer {self.token}":
                status = 401
            else:
                failure = next((f for f in self.failures if f.method == request.method
                                and f.path == path and f.times > 0), None)
                if failure is not None:
                    failure.times -= 1
                    status = failure.status
            self.calls.append(Call(request.method, path, body, status))
        if status == 401:
            return _error(401, "api.context.session_expired.app_error", "Invalid or expired "
                          "session, please login again.")
        if failure is not None:
            return _error(failure.status, "fake.failure", failure.message, failure.headers)
        return None

    async def _me(self, request: web.Request) -> web.Response:
        refused = self._refusal(request, None)
        return refused or web.json_response({"id": self.bot_id, "username": self.username,
                                             "is_bot": True, "roles": "system_user"})

    async def _post(self, request: web.Request) -> web.Response:
        body = await request.json()
        refused = self._refusal(request, body)
        if refused is not None:
            return refused
        if len(body.get("message", "")) > MAX_POST:
            return _error(400, "model.post.is_valid.msg.app_error", "Invalid message")
        post = {"id": new_id(), "create_at": int(time.time() * 1000), "user_id": self.bot_id,
                "channel_id": body["channel_id"], "root_id": body.get("root_id", ""),
                "message": body["message"], "props": body.get("props", {}), "type": "",
                "at": time.monotonic()}
        with self._lock:
            self.posts.append(post)
        return web.json_response(post, status=201)

    async def _typing(self, request: web.Request) -> web.Response:
        refused = self._refusal(request, await request.json())
        return refused or web.json_response({"status": "OK"})

    async def _file(self, request: web.Request) -> web.Response:
        refused = self._refusal(request, None)
        if refused is not None:
            return refused
        data = self.files.get(request.match_info["file_id"])
        if data is None:
            return _error(404, "app.file.get.app_error", "file not found")
        return web.Response(body=data, content_type="application/octet-stream")

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        if self.refuse_websockets:
            return web.Response(status=503, text="unavailable")
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        connection = self._resumed(request) or Connection(new_id())
        await socket.send_json({"event": "hello", "data": {
            "connection_id": connection.id, "server_version": "10.5.0"},
            "broadcast": {"user_id": self.bot_id}, "seq": 0 if not connection.seq else None})
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                break
            action = json.loads(message.data)
            if action.get("action") == "authentication_challenge":
                good = action.get("data", {}).get("token") == self.token
                await socket.send_json({"status": "OK" if good else "FAIL",
                                        "seq_reply": action.get("seq")})
                if not good:
                    break
                for missed in connection.missed:
                    await self._hand(socket, missed)
                connection.missed.clear()
                connection.socket = socket
                self._connections[connection.id] = connection
                self._sockets.add(socket)
        self._sockets.discard(socket)
        if connection.socket is socket:
            connection.socket = None
        return socket

    async def _hand(self, socket: web.WebSocketResponse, event: dict[str, Any]) -> None:
        await socket.send_json(event)
        post = json.loads(event["data"]["post"])
        self.handed.setdefault(post["id"], time.monotonic())

    def _resumed(self, request: web.Request) -> Connection | None:
        """The connection a client asks to resume, when its next event is still here."""
        found = self._connections.get(request.query.get("connection_id", ""))
        wanted = request.query.get("sequence_number", "")
        if found is None or not wanted.isdigit() or found.socket is not None:
            return None
        first = found.missed[0]["seq"] if found.missed else found.seq + 1
        return found if int(wanted) == first else None


@dataclass
class Connection:
    """One WebSocket connection as the server keeps it: its sequence numbers go on when a
    client resumes it, and the events sent while it was cut wait for that."""

    id: str
    seq: int = 0
    socket: web.WebSocketResponse | None = None
    missed: list[dict[str, Any]] = field(default_factory=list)


def _error(status: int, error_id: str, message: str,
           headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"id": error_id, "message": message, "detailed_error": "",
                              "request_id": new_id(), "status_code": status},
                             status=status, headers=headers)
