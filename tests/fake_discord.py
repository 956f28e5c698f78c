"""A fake Discord on loopback for the discord platform's tests: REST v10 over HTTP and the
Gateway over a WebSocket, both from one aiohttp server, so discord.py itself runs.

REST (``/api/v10``, ``Authorization: Bot <token>``, else 401): ``GET /users/@me``,
``GET /oauth2/applications/@me``, ``GET /gateway/bot`` (the WebSocket's address),
``PUT /applications/{id}/commands``, ``POST /users/@me/channels`` (a DM channel),
``POST /channels/{id}/messages`` (2000 characters at most, else 400 code 50035),
``POST /channels/{id}/typing``, ``POST /interactions/{id}/{token}/callback``, ``PATCH
/webhooks/{app}/{token}/messages/@original``; files users attached are served at
``/attachments/...``. Scripted failures (``fail``) answer a route with an error, a 429
with ``retry_after`` (and Discord's rate-limit headers) included.

Gateway (``/gateway``): HELLO (op 10), IDENTIFY (op 2; a wrong token is closed 4004, the
Message Content intent without ``content_intent`` 4014), READY and GUILD_CREATE
dispatches, heartbeats (op 1, acknowledged op 11), RESUME (op 6: RESUMED), RECONNECT
(op 7, sent by ``reconnect``), and dispatches of MESSAGE_CREATE and INTERACTION_CREATE
from ``say`` and ``command``. Every request and dispatch is recorded with its time
(``calls``, ``dispatched``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

MAX_TEXT = 2000
MESSAGE_CONTENT = 1 << 15
BOT_ID, APP_ID, GUILD_ID, CHANNEL_ID, THREAD_ID, ROLE_ID = (
    700000000000000001, 700000000000000002, 700000000000000100, 700000000000000200,
    700000000000000300, 700000000000000400)
OTHER_CHANNEL_ID = 700000000000000201


@dataclass
class Call:
    method: str
    path: str
    body: Any
    status: int = 200
    answer: Any = None
    """What the fake answered (a message the bot posted, as Discord returns it)."""
    at: float = field(default_factory=time.monotonic)


@dataclass
class Failure:
    method: str
    path_part: str
    status: int
    body: dict[str, Any]
    retry_after: float | None = None
    times: int = 1


@contextlib.contextmanager
def serving(token: str, **options: Any) -> Iterator[FakeDiscord]:
    fake = FakeDiscord(token, **options).start()
    try:
        yield fake
    finally:
        fake.stop()


def _json(body: Any, status: int, headers: dict[str, str] | None = None) -> web.Response:
    """As Discord answers: ``Content-Type: application/json`` exactly (discord.py reads a
    body as JSON only then) and ``Via`` (discord.py takes a 429 without it for a ban by
    Cloudflare, not a rate limit)."""
    return web.Response(body=json.dumps(body).encode(), status=status,
                        headers={"Content-Type": "application/json", "Via": "1.1 google",
                                 **(headers or {})})


async def _body(request: web.Request) -> Any:
    """A request's JSON, or a multipart upload's ``payload_json`` with its files (their
    bytes under ``files``), as discord.py sends attachments."""
    if not request.can_read_body:
        return None
    if not request.content_type.startswith("multipart/"):
        return await request.json()
    form = await request.post()
    body = json.loads(str(form.get("payload_json") or "{}"))
    body["files"] = [{"filename": field.filename, "data": field.file.read()}
                     for name, field in form.items() if name.startswith("files[")
                     and isinstance(field, web.FileField)]
    return body


def _now() -> str:
    return datetime.now(UTC).isoformat()


class FakeDiscord:
    """One bot's Discord: a guild with a channel, a thread and a role, and DMs."""

    def __init__(self, token: str, *, content_intent: bool = True):
        self.token = token
        self.content_intent = content_intent
        """Whether the Message Content intent is turned on in the "Developer Portal"."""
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.commands: list[dict[str, Any]] = []
        self.dispatched: list[tuple[str, dict[str, Any], float]] = []
        self.identified = 0
        self.resumed = 0
        self.files: dict[str, bytes] = {}
        self._ids = itertools.count(800000000000000000)
        self._sockets: set[web.WebSocketResponse] = set()
        self._seq = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> FakeDiscord:
        ready = threading.Event()
        threading.Thread(target=self._serve, args=(ready,), daemon=True).start()
        if not ready.wait(10):
            raise RuntimeError("fake Discord did not start")
        return self

    def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{name}", self._attachment)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner = web.AppRunner(app, shutdown_timeout=2.0)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self._loop.run_forever()

    def stop(self) -> None:
        loop, runner = self._loop, self._runner
        if loop is None or runner is None:
            return  # stopped already
        asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(10)
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._loop = self._runner = None
        self._sockets.clear()

    async def _close_all(self) -> None:
        for ws in list(self._sockets):  # the client may not answer the close: no waiting
            with contextlib.suppress(TimeoutError, ConnectionError, RuntimeError):
                await asyncio.wait_for(ws.close(), 1.0)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    # --- scripting ---------------------------------------------------------------

    def fail(self, method: str, path_part: str, status: int, message: str, *,
             code: int = 0, retry_after: float | None = None, times: int = 1) -> None:
        body: dict[str, Any] = {"message": message, "code": code}
        if retry_after is not None:
            body |= {"retry_after": retry_after, "global": False}
        with self._lock:
            self.failures.append(Failure(method, path_part, status, body, retry_after, times))

    def user(self, user_id: int, name: str = "ada") -> dict[str, Any]:
        return {"id": str(user_id), "username": name, "discriminator": "0",
                "global_name": name.title(), "avatar": None}

    def say(self, text: str, *, user_id: int, name: str = "ada", guild: bool = False,
            channel_id: int | None = None, mention: bool = False,
            reply_to: dict[str, Any] | None = None, roles: tuple[int, ...] = (),
            attachments: list[dict[str, Any]] | None = None, flags: int = 0) -> int:
        """A user's message: in a DM (the user's own DM channel) unless ``guild``; its id."""
        message_id = next(self._ids)
        author = self.user(user_id, name)
        content = f"<@{BOT_ID}> {text}" if mention else text
        data: dict[str, Any] = {
            "id": str(message_id), "type": 19 if reply_to else 0, "content": content,
            "channel_id": str(channel_id or (CHANNEL_ID if guild else self.dm_channel(user_id))),
            "author": author, "timestamp": _now(), "edited_timestamp": None, "tts": False,
            "mention_everyone": False, "mentions": [self._me()] if mention else [],
            "mention_roles": [], "attachments": attachments or [], "embeds": [],
            "pinned": False, "flags": flags}
        if guild:
            data["guild_id"] = str(GUILD_ID)
            data["member"] = {"roles": [str(r) for r in roles], "joined_at": _now(),
                              "deaf": False, "mute": False, "flags": 0}
        if reply_to:
            data["message_reference"] = {"message_id": reply_to["id"],
                                         "channel_id": reply_to["channel_id"]}
            data["referenced_message"] = reply_to
        self.dispatch("MESSAGE_CREATE", data)
        return message_id

    def command(self, name: str, value: str = "", *, user_id: int, guild: bool = False,
                channel_id: int | None = None, roles: tuple[int, ...] = ()) -> str:
        """A user's slash command; the interaction's token."""
        token = f"itoken-{next(self._ids)}"
        channel = channel_id or (CHANNEL_ID if guild else self.dm_channel(user_id))
        data: dict[str, Any] = {
            "id": str(next(self._ids)), "application_id": str(APP_ID), "type": 2,
            "token": token, "version": 1, "attachment_size_limit": 8_388_608,
            "channel_id": str(channel), "channel": {"id": str(channel),
                                                   "type": 0 if guild else 1},
            "app_permissions": "0", "locale": "en-US", "entitlements": [],
            "data": {"id": str(next(self._ids)), "name": name, "type": 1,
                     "options": [{"name": "text", "type": 3, "value": value}] if value else []}}
        if guild:
            data["guild_id"] = str(GUILD_ID)
            data["member"] = {"user": self.user(user_id), "roles": [str(r) for r in roles],
                              "joined_at": _now(), "deaf": False, "mute": False, "flags": 0,
                              "permissions": "0"}
        else:
            data["user"] = self.user(user_id)
        self.dispatch("INTERACTION_CREATE", data)
        return token

    def image(self, name: str, data: bytes, content_type: str) -> dict[str, Any]:
        """An attachment for ``say``, served by this fake."""
        self.files[name] = data
        return {"id": str(next(self._ids)), "filename": name, "size": len(data),
                "content_type": content_type,
                "url": f"http://127.0.0.1:{self.port}/attachments/{name}",
                "proxy_url": f"http://127.0.0.1:{self.port}/attachments/{name}"}

    @staticmethod
    def dm_channel(user_id: int) -> int:
        return 900000000000000000 + user_id

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._dispatch(event, data), self._loop).result(10)

    def reconnect(self) -> None:
        """Ask every session to reconnect (op 7); discord.py resumes."""
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._send_all({"op": 7, "d": None}),
                                         self._loop).result(10)

    # --- what happened -----------------------------------------------------------

    def sent(self, channel_id: int | None = None) -> list[Call]:
        """Messages the bot posted (successfully), to ``channel_id`` if given."""
        with self._lock:
            return [c for c in self.calls if c.method == "POST" and c.status == 200
                    and c.path.endswith("/messages") and (
                        channel_id is None or c.path == f"channels/{channel_id}/messages")]

    def texts(self, channel_id: int | None = None) -> list[str]:
        return [str(c.body.get("content", "")) for c in self.sent(channel_id)]

    def uploads(self, channel_id: int) -> list[dict[str, Any]]:
        """Files the bot posted in ``channel_id`` (``filename``, ``data``)."""
        return [file for call in self.sent(channel_id) for file in call.body.get("files", [])]

    def of(self, method: str, path_part: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method and path_part in c.path]

    # --- REST --------------------------------------------------------------------

    def _me(self) -> dict[str, Any]:
        return {"id": str(BOT_ID), "username": "hermes", "discriminator": "0",
                "global_name": "Hermes", "avatar": None, "bot": True}

    async def _rest(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        body = await _body(request)
        call = Call(request.method, path, body)
        with self._lock:
            self.calls.append(call)
        if request.headers.get("Authorization") != f"Bot {self.token}" and \
                not path.startswith("interactions/"):
            call.status = 401
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        failure = self._scripted(request.method, path)
        if failure is not None:
            call.status = failure.status
            headers = {"X-RateLimit-Scope": "user", "Retry-After": str(failure.retry_after)} \
                if failure.retry_after is not None else {}
            return _json(failure.body, failure.status, headers)
        status, answer = self._answer(request.method, path, body)
        call.status, call.answer = status, answer
        if status == 204:
            return web.Response(status=204)
        return _json(answer, status)

    def _scripted(self, method: str, path: str) -> Failure | None:
        with self._lock:
            for failure in self.failures:
                if failure.method == method and failure.path_part in path and failure.times:
                    failure.times -= 1
                    return failure
        return None

    def _answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = path.split("/")
        if (method, path) == ("GET", "users/@me"):
            return 200, self._me()
        if (method, path) == ("GET", "oauth2/applications/@me"):
            return 200, {"id": str(APP_ID), "name": "Hermes", "description": "", "icon": None,
                         "bot_public": False, "bot_require_code_grant": False,
                         "owner": self.user(1, "owner"), "verify_key": "0" * 64,
                         "flags": 0, "team": None, "summary": ""}
        if (method, path) == ("GET", "gateway/bot"):
            return 200, {"url": f"ws://127.0.0.1:{self.port}/gateway", "shards": 1,
                         "session_start_limit": {"total": 1000, "remaining": 999,
                                                 "reset_after": 0, "max_concurrency": 1}}
        if method == "PUT" and parts[0] == "applications" and parts[-1] == "commands":
            self.commands = [dict(c, id=str(next(self._ids)), application_id=str(APP_ID),
                                  version="1") for c in body]
            return 200, self.commands
        if method == "POST" and parts[0] == "channels" and parts[-1] == "messages":
            return self._message(parts[1], body)
        if (method, path) == ("POST", "users/@me/channels"):
            recipient = int(body["recipient_id"])
            return 200, {"id": str(self.dm_channel(recipient)), "type": 1, "last_message_id": None,
                         "recipients": [self.user(recipient, "recipient")]}
        if method == "POST" and parts[0] == "channels" and parts[-1] == "typing":
            return 204, None
        if method == "POST" and parts[0] == "interactions":
            return 204, None
        if method == "PATCH" and parts[0] == "webhooks":
            return self._message(str(CHANNEL_ID), body)
        return 404, {"message": "404: Not Found", "code": 0}

    def _message(self, channel_id: str, body: dict[str, Any]) -> tuple[int, Any]:
        content = str(body.get("content") or "")
        files = [{"id": str(n), "filename": f["filename"], "size": len(f["data"]),
                  "url": "", "proxy_url": ""} for n, f in enumerate(body.get("files", []))]
        if len(content) > MAX_TEXT:
            return 400, {"message": "Invalid Form Body", "code": 50035, "errors": {
                "content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH",
                                         "message": "Must be 2000 or fewer in length."}]}}}
        return 200, {"id": str(next(self._ids)), "type": 0, "content": content,
                     "channel_id": channel_id, "author": self._me(), "timestamp": _now(),
                     "edited_timestamp": None, "tts": False, "mention_everyone": False,
                     "mentions": [], "mention_roles": [], "attachments": files, "embeds": [],
                     "pinned": False, "flags": 0}

    async def _attachment(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["name"])
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    # --- the gateway -------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}})
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                break
            await self._received(ws, json.loads(msg.data))
        self._sockets.discard(ws)
        return ws

    async def _received(self, ws: web.WebSocketResponse, payload: dict[str, Any]) -> None:
        op, data = payload.get("op"), payload.get("d")
        if op == 1:
            await ws.send_json({"op": 11})
        elif op == 2:
            await self._identify(ws, data or {})
        elif op == 6:
            self.resumed += 1
            self._sockets.add(ws)
            await self._send(ws, "RESUMED", {})

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        if data.get("token") != self.token:
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        if int(data.get("intents", 0)) & MESSAGE_CONTENT and not self.content_intent:
            await ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        self.identified += 1
        self._sockets.add(ws)
        await self._send(ws, "READY", {
            "v": 10, "user": self._me(), "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": f"session-{self.identified}", "private_channels": [],
            "resume_gateway_url": f"ws://127.0.0.1:{self.port}/gateway",
            "application": {"id": str(APP_ID), "flags": 0}})
        await self._send(ws, "GUILD_CREATE", self._guild())

    def _guild(self) -> dict[str, Any]:
        channel = {"guild_id": str(GUILD_ID), "position": 0, "permission_overwrites": [],
                   "nsfw": False, "parent_id": None, "topic": None, "last_message_id": None,
                   "rate_limit_per_user": 0}
        return {
            "id": str(GUILD_ID), "name": "Test server", "icon": None, "owner_id": "1",
            "features": [], "emojis": [], "stickers": [], "verification_level": 0,
            "default_message_notifications": 0, "explicit_content_filter": 0, "mfa_level": 0,
            "system_channel_flags": 0, "premium_tier": 0, "nsfw_level": 0,
            "preferred_locale": "en-US", "member_count": 3, "large": False, "unavailable": False,
            "joined_at": _now(),
            "roles": [{"id": str(GUILD_ID), "name": "@everyone", "permissions": "0",
                       "position": 0, "color": 0, "hoist": False, "managed": False,
                       "mentionable": False, "flags": 0},
                      {"id": str(ROLE_ID), "name": "ops", "permissions": "0", "position": 1,
                       "color": 0, "hoist": False, "managed": False, "mentionable": True,
                       "flags": 0}],
            "members": [{"user": self._me(), "roles": [], "joined_at": _now(), "deaf": False,
                         "mute": False, "flags": 0}],
            "channels": [channel | {"id": str(CHANNEL_ID), "type": 0, "name": "general"},
                         channel | {"id": str(OTHER_CHANNEL_ID), "type": 0, "name": "random"}],
            "threads": [{"id": str(THREAD_ID), "guild_id": str(GUILD_ID), "type": 11,
                         "name": "a thread", "parent_id": str(CHANNEL_ID), "owner_id": "42",
                         "last_message_id": None, "rate_limit_per_user": 0,
                         "message_count": 0, "member_count": 2, "flags": 0,
                         "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                             "archive_timestamp": _now(), "locked": False}}],
            "voice_states": [], "presences": [], "stage_instances": [],
            "guild_scheduled_events": [], "soundboard_sounds": []}

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        self.dispatched.append((event, data, time.monotonic()))
        for ws in list(self._sockets):
            await self._send(ws, event, data)

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        self._seq += 1
        with contextlib.suppress(ConnectionError, RuntimeError):
            await ws.send_json({"op": 0, "t": event, "s": self._seq, "d": data})

    async def _send_all(self, payload: dict[str, Any]) -> None:
        for ws in list(self._sockets):
            self._sockets.discard(ws)
            with contextlib.suppress(ConnectionError, RuntimeError):
                await ws.send_json(payload)
