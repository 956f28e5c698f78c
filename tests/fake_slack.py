"""A fake Slack on loopback for the slack platform's tests: the Web API over HTTP and a
Socket Mode WebSocket, both as Slack speaks them, so slack-sdk and slack-bolt run as they
would against slack.com.

Web API: ``POST /api/<method>`` (token in ``Authorization: Bearer`` or the ``token``
parameter; form, query or JSON parameters), ``{"ok": ..., ...}`` answers: ``auth.test``,
``apps.connections.open`` (the app-level token only; answers this fake's ``ws://`` URL),
``chat.postMessage`` (checks Slack's limits: 3000 characters per section block,
``invalid_blocks``; 40,000 per text, ``msg_too_long``), ``chat.update``, ``users.info``,
``conversations.info``, ``reactions.add``/``remove`` and ``views.publish``; the files users
sent (voice clips) at their ``url_private_download``, to the bot token only; the app's uploads
(``files.getUploadURLExternal``, the upload URL, ``files.completeUploadExternal``). Scripted
failures (``fail``), 429 with ``Retry-After`` included. Socket Mode: ``hello`` on connect,
then the envelopes the tests push (``events_api``, ``slash_commands``, ``interactive``),
each acknowledged by the client with its ``envelope_id`` (``acks``); ``refresh`` sends a
``disconnect`` (``refresh_requested``). Every call and envelope records its time
(``time.monotonic``). ``stop()`` and ``start()`` restart it on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

TEAM, APP = "T0HERMES", "A0HERMES"
BOT_USER, BOT_ID = "U0BOT", "B0BOT"
SECTION_MAX, TEXT_MAX = 3000, 40000


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    token: str
    at: float = field(default_factory=time.monotonic)
    ok: bool = False
    """Whether Slack answered ``ok``."""


@dataclass
class Failure:
    method: str
    error: str
    status: int = 200
    retry_after: int | None = None
    times: int = 1


@dataclass
class Envelope:
    envelope_id: str
    kind: str
    payload: dict[str, Any]
    at: float = field(default_factory=time.monotonic)
    acked_at: float | None = None


@contextlib.contextmanager
def serving(bot_token: str, app_token: str) -> Iterator[FakeSlack]:
    """A started ``FakeSlack``, stopped at the end."""
    fake = FakeSlack(bot_token, app_token).start()
    try:
        yield fake
    finally:
        fake.stop()


class FakeSlack:
    """One workspace with one app installed. ``calls`` records Web API requests."""

    def __init__(self, bot_token: str, app_token: str, bot_name: str = "hermes"):
        self.bot_token = bot_token
        self.app_token = app_token
        self.bot_name = bot_name
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.envelopes: dict[str, Envelope] = {}
        self.users: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        """Files users sent, by id: served at ``url_private_download`` to the bot token."""
        self.downloads: list[str] = []
        self.uploads: dict[str, dict[str, Any]] = {}
        """Files the app uploaded, by id: name, data, and where they were shared."""
        self.connections = 0
        self.port = 0
        self._ts = itertools.count(1)
        self._sockets: set[web.WebSocketResponse] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The Web API's base URL (``settings.api_base``)."""
        return f"http://127.0.0.1:{self.port}/api/"

    def start(self) -> FakeSlack:
        if not self.port:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake Slack did not start")
        return self

    def stop(self) -> None:
        """Close every socket and stop serving (``start`` serves again on the port)."""
        if self._loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join(10)
        self._loop = None

    def _serve(self, ready: threading.Event) -> None:
        loop = self._loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/link/", self._socket)
        app.router.add_get("/files-pri/{team}-{file}/{name}", self._file)
        app.router.add_post("/upload/v1/{file}", self._upload)
        self._runner = web.AppRunner(app)
        loop.run_until_complete(self._runner.setup())
        loop.run_until_complete(web.TCPSite(self._runner, "127.0.0.1", self.port).start())
        ready.set()
        loop.run_forever()
        loop.close()

    async def _shutdown(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        assert self._runner is not None
        await self._runner.cleanup()

    # -- what tests do ----------------------------------------------------------------

    def fail(self, method: str, error: str, *, status: int = 200,
             retry_after: int | None = None, times: int = 1) -> None:
        self.failures.append(Failure(method, error, status, retry_after, times))

    def message(self, user: str, text: str, channel: str, *, channel_type: str = "im",
                thread_ts: str | None = None, **extra: Any) -> str:
        """A user's message (a ``message`` event); its ``ts``."""
        ts = self.next_ts()
        event = {"type": "message", "user": user, "text": text, "ts": ts, "channel": channel,
                 "channel_type": channel_type, "event_ts": ts, **extra}
        if thread_ts:
            event["thread_ts"] = thread_ts
        self.event(event)
        return ts

    def mention(self, user: str, text: str, channel: str, *, thread_ts: str | None = None
                ) -> str:
        """A message mentioning the app in a channel: Slack sends both the ``message`` and
        the ``app_mention`` event; its ``ts``."""
        ts = self.next_ts()
        body = f"<@{BOT_USER}> {text}"
        common = {"user": user, "text": body, "ts": ts, "channel": channel, "event_ts": ts,
                  **({"thread_ts": thread_ts} if thread_ts else {})}
        self.event({"type": "message", "channel_type": "channel", **common})
        self.event({"type": "app_mention", **common})
        return ts

    def event(self, event: dict[str, Any]) -> str:
        payload = {"token": "verification", "team_id": TEAM, "api_app_id": APP,
                   "event": event, "type": "event_callback",
                   "event_id": f"Ev{uuid.uuid4().hex[:10].upper()}",
                   "event_time": int(time.time()), "authorizations": [
                       {"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}
        return self.push("events_api", payload)

    def command(self, user: str, channel: str, text: str, command: str = "/hermes") -> str:
        return self.push("slash_commands", {
            "token": "verification", "team_id": TEAM, "team_domain": "hermes-test",
            "channel_id": channel, "channel_name": "directmessage" if channel[0] == "D"
            else "general", "user_id": user, "user_name": self.users.get(user, user.lower()),
            "command": command, "text": text, "api_app_id": APP, "is_enterprise_install":
            "false", "response_url": f"http://127.0.0.1:{self.port}/respond",
            "trigger_id": f"trig.{uuid.uuid4().hex[:8]}"})

    def click(self, user: str, posted: Call, value: str) -> str:
        """``user`` clicks the button of ``value`` under the posted message ``posted``."""
        buttons = [e for b in posted.params.get("blocks") or () if b["type"] == "actions"
                   for e in b["elements"] if e["value"] == value]
        assert buttons, f"no {value} button in {posted.params}"
        message = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID,
                   "ts": posted.params["ts"], "text": posted.params.get("text", ""),
                   "blocks": posted.params.get("blocks")}
        if posted.params.get("thread_ts"):
            message["thread_ts"] = posted.params["thread_ts"]
        channel = posted.params["channel"]
        return self.push("interactive", {
            "type": "block_actions", "user": {"id": user, "username": user.lower(),
                                              "name": user.lower(), "team_id": TEAM},
            "api_app_id": APP, "token": "verification", "trigger_id": "trig.1",
            "team": {"id": TEAM, "domain": "hermes-test"},
            "container": {"type": "message", "message_ts": posted.params["ts"],
                          "channel_id": channel, "is_ephemeral": False},
            "channel": {"id": channel, "name": "general"}, "message": message,
            "response_url": f"http://127.0.0.1:{self.port}/respond",
            "actions": [{"action_id": buttons[0]["action_id"], "block_id": "hermes_approval",
                         "value": value, "type": "button", "action_ts": str(time.time()),
                         "text": buttons[0]["text"]}]})

    def voice_clip(self, data: bytes) -> dict[str, Any]:
        """A voice clip as a message's ``files`` entry carries it (``subtype: slack_audio``)."""
        file_id = f"F{uuid.uuid4().hex[:10].upper()}"
        self.files[file_id] = data
        url = f"http://127.0.0.1:{self.port}/files-pri/{TEAM}-{file_id}/audio_message.m4a"
        return {"id": file_id, "name": "audio_message.m4a", "title": "audio_message.m4a",
                "mimetype": "audio/mp4", "filetype": "m4a", "subtype": "slack_audio",
                "size": len(data), "url_private": url, "url_private_download": url + "?dl=1"}

    def push(self, kind: str, payload: dict[str, Any]) -> str:
        envelope = Envelope(str(uuid.uuid4()), kind, payload)
        self.envelopes[envelope.envelope_id] = envelope
        self._send_all({"envelope_id": envelope.envelope_id, "type": kind, "payload": payload,
                        "accepts_response_payload": kind != "events_api",
                        "retry_attempt": 0, "retry_reason": ""})
        return envelope.envelope_id

    def refresh(self) -> None:
        """Slack's periodic ``disconnect`` (``refresh_requested``): reconnect elsewhere."""
        self._send_all({"type": "disconnect", "reason": "refresh_requested",
                        "debug_info": {"host": "fake-slack"}})

    def acked(self, envelope_id: str) -> bool:
        return self.envelopes[envelope_id].acked_at is not None

    def of(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    def posts(self, channel: str, thread_ts: str | None = None) -> list[Call]:
        """Messages the app posted in ``channel`` (in the thread ``thread_ts``, or
        outside threads when None)."""
        return [c for c in self.of("chat.postMessage") if c.ok
                and c.params["channel"] == channel
                and (c.params.get("thread_ts") or None) == thread_ts]

    def texts(self, channel: str, thread_ts: str | None = None) -> list[str]:
        """What the posts say (the section's mrkdwn, else the text)."""
        return [section_text(c.params) for c in self.posts(channel, thread_ts)]

    def next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    @property
    def sockets(self) -> int:
        return len(self._sockets)

    # -- the server -------------------------------------------------------------------

    def _send_all(self, message: dict[str, Any]) -> None:
        assert self._loop is not None, "not serving"
        data = json.dumps(message)

        async def send() -> None:
            for ws in list(self._sockets):
                await ws.send_str(data)

        asyncio.run_coroutine_threadsafe(send(), self._loop).result(10)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.add(ws)
        self.connections += 1
        await ws.send_json({"type": "hello", "num_connections": len(self._sockets),
                            "debug_info": {"host": "fake-slack", "approximate_connection_time":
                                           18060}, "connection_info": {"app_id": APP}})
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    self._ack(json.loads(message.data))
        finally:
            self._sockets.discard(ws)
        return ws

    async def _file(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.bot_token}":
            return web.Response(status=302, headers={"Location": "/?redir=login"})
        file_id = request.match_info["file"]
        if file_id not in self.files:
            return web.Response(status=404)
        self.downloads.append(file_id)
        return web.Response(body=self.files[file_id], content_type="audio/mp4")

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file"]
        if file_id not in self.uploads:
            return web.Response(status=404)
        self.uploads[file_id]["data"] = await request.read()
        return web.Response(text=f"OK - {len(self.uploads[file_id]['data'])}")

    def _ack(self, data: dict[str, Any]) -> None:
        envelope = self.envelopes.get(str(data.get("envelope_id")))
        if envelope is not None:
            envelope.acked_at = time.monotonic()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        else:
            params.update(await request.post())
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or \
            str(params.pop("token", ""))
        call = Call(method, params, token)
        self.calls.append(call)
        status, body, headers = self._answer(call)
        call.ok = bool(body.get("ok"))
        return web.json_response(body, status=status, headers=headers)

    def _answer(self, call: Call) -> tuple[int, dict[str, Any], dict[str, str]]:
        failure = self._failure(call.method)
        if failure is not None:
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after else {}
            return failure.status, {"ok": False, "error": failure.error}, headers
        wanted = self.app_token if call.method == "apps.connections.open" else self.bot_token
        if call.token != wanted:
            wrong = call.token in (self.app_token, self.bot_token)
            return 200, {"ok": False, "error": "not_allowed_token_type" if wrong
                         else "invalid_auth"}, {}
        handler = ANSWERS.get(call.method)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        return 200, handler(self, call.params), {}

    def _failure(self, method: str) -> Failure | None:
        for failure in self.failures:
            if failure.method == method and failure.times > 0:
                failure.times -= 1
                return failure
        return None

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://hermes-test.slack.com/", "team": "Hermes Test",
                "user": self.bot_name, "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID,
                "is_enterprise_install": False}

    def _connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket="
                                   f"{uuid.uuid4().hex}&app_id={APP}"}

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            blocks = params["blocks"] = json.loads(blocks)
        if not params.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not params.get("text") and not blocks:
            return {"ok": False, "error": "no_text"}
        if len(str(params.get("text") or "")) > TEXT_MAX:
            return {"ok": False, "error": "msg_too_long"}
        if any(len(b.get("text", {}).get("text", "")) > SECTION_MAX for b in blocks or ()
               if b.get("type") == "section"):
            return {"ok": False, "error": "invalid_blocks",
                    "errors": ["must be less than 3001 characters [json-pointer:/blocks/0/text]"]}
        params["ts"] = self.next_ts()
        return {"ok": True, "channel": params["channel"], "ts": params["ts"], "message": {
            "type": "message", "text": params.get("text"), "user": BOT_USER, "bot_id": BOT_ID,
            "ts": params["ts"]}}

    def _upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{uuid.uuid4().hex[:10].upper()}"
        self.uploads[file_id] = {"name": params.get("filename"), "data": None}
        return {"ok": True, "file_id": file_id,
                "upload_url": f"http://127.0.0.1:{self.port}/upload/v1/{file_id}"}

    def _complete_upload(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        for file in files:
            upload = self.uploads.get(str(file.get("id")))
            if upload is None or upload["data"] is None:
                return {"ok": False, "error": "file_not_found"}
            upload.update(channel=params.get("channel_id"), thread_ts=params.get("thread_ts"),
                          title=file.get("title"))
        return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user"))
        if user not in self.users:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": {"id": user, "name": self.users[user], "team_id": TEAM}}


def _ok(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True}


def section_text(params: dict[str, Any]) -> str:
    """A post's words: its first section's mrkdwn, else its text."""
    for block in params.get("blocks") or ():
        if block.get("type") == "section":
            return str(block["text"]["text"])
    return str(params.get("text") or "")


ANSWERS: dict[str, Callable[[FakeSlack, dict[str, Any]], dict[str, Any]]] = {
    "auth.test": FakeSlack._auth_test, "apps.connections.open": FakeSlack._connections_open,
    "chat.postMessage": FakeSlack._post_message, "chat.update": _ok,
    "users.info": FakeSlack._users_info,
    "files.getUploadURLExternal": FakeSlack._upload_url,
    "files.completeUploadExternal": FakeSlack._complete_upload,
    "files.info": lambda fake, params: {"ok": True, "file": {"id": params.get("file")}},
    "conversations.info": lambda fake, params: {"ok": True, "channel": {
        "id": params.get("channel"), "is_member": True}},
    "reactions.add": _ok, "reactions.remove": _ok,
    "views.publish": lambda fake, params: {"ok": True, "view": {"id": "V1"}}}
"""The Web API methods served, by name."""
