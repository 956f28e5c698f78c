"""A fake ``signal-cli`` daemon (``daemon --http``) on loopback, for the signal platform's
tests.

It speaks the daemon's wire: JSON-RPC 2.0 on ``POST /api/v1/rpc`` (``version``, ``send``,
``sendTyping``, ``getAttachment``, ``listAccounts``; errors as ``{"code", "message",
"data"}``), Server-Sent Events on ``GET /api/v1/events`` (``event:receive`` then
``data:{"envelope": ..., "account": ...}`` and a blank line; ``:`` keep-alives) and
``GET /api/v1/check``; like the daemon it keeps its latest 1000 events (ids
``<run>-<sequence>``) and replays those after a stream's ``Last-Event-ID``. ``push``
makes a person's message (a ``dataMessage`` with ``groupInfo``, ``mentions`` as U+FFFC
placeholders, ``attachments``, ``quote``) and sends it to every open stream. Every call
is recorded with its time; ``fail`` scripts errors (Signal's rate limit included);
``cut()`` ends the streams; ``stop()``/``start()`` restart it on the same port.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from chat_fake_support import LoopServer

VERSION = "0.13.18"
STYLES = {"NORMAL", "ITALIC", "BOLD", "SPOILER", "STRIKETHROUGH", "MONOSPACE"}


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    ok: bool = True
    at: float = field(default_factory=time.monotonic)


@dataclass
class Failure:
    method: str
    error: dict[str, Any] | None = None
    """A JSON-RPC error; None: a ``send`` whose result carries ``result`` instead."""
    result: dict[str, Any] | None = None
    times: int = 1


@contextmanager
def serving(account: str) -> Iterator[FakeSignalDaemon]:
    daemon = FakeSignalDaemon(account).start()
    try:
        yield daemon
    finally:
        daemon.stop()


class FakeSignalDaemon(LoopServer):
    """One account's daemon. ``push`` delivers a message; ``calls`` records requests."""

    def __init__(self, account: str):
        super().__init__()
        self.account = account
        self.calls: list[Call] = []
        self.handed: dict[int, float] = {}
        """When each message (by timestamp) first went out on an event stream
        (``time.monotonic``): with a ``send``'s ``at``, the platform's time from message in
        to reply out."""
        self.failures: list[Failure] = []
        self.attachments: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._streams: set[asyncio.Queue[str | None]] = set()
        self._buffer: deque[tuple[int, str]] = deque(maxlen=1000)
        """The latest events, replayed to a stream that names the last one it read."""
        self._run_id = ""
        self.paused = False
        """Refuse new event streams (503) while set."""
        self._clock = itertools.count(int(time.time() * 1000))

    # --- lifecycle -------------------------------------------------------------------

    @property
    def listening(self) -> int:
        """Event streams open now."""
        return len(self._streams)

    # --- scripting -------------------------------------------------------------------

    def push(self, text: str, *, number: str | None, uuid_: str = "", name: str = "",
             group: str = "", mentions: list[dict[str, Any]] | None = None,
             quote_author: str = "", attachments: list[dict[str, Any]] | None = None) -> int:
        """A person's message to the account; its timestamp. A mention is a U+FFFC in
        ``text`` and an entry of ``mentions`` (``number``/``uuid``, ``start``)."""
        stamp = next(self._clock)
        message: dict[str, Any] = {"timestamp": stamp, "message": text or None,
                                   "expiresInSeconds": 0, "viewOnce": False}
        if group:
            message["groupInfo"] = {"groupId": group, "groupName": "Team", "revision": 3,
                                    "type": "DELIVER"}
        if mentions:
            message["mentions"] = [{"name": m.get("number") or m.get("uuid"), "length": 1,
                                    **m} for m in mentions]
        if quote_author:
            message["quote"] = {"id": stamp - 1000, "author": quote_author,
                                "authorNumber": quote_author, "text": "an earlier answer"}
        if attachments:
            message["attachments"] = attachments
        envelope = {"source": number or uuid_, "sourceNumber": number,
                    "sourceUuid": uuid_ or str(uuid.uuid5(uuid.NAMESPACE_OID, number or "")),
                    "sourceName": name, "sourceDevice": 1, "timestamp": stamp,
                    "serverReceivedTimestamp": stamp, "serverDeliveredTimestamp": stamp,
                    "dataMessage": message}
        self._emit({"envelope": envelope, "account": self.account})
        return stamp

    def emit_raw(self, envelope: dict[str, Any]) -> None:
        """Any envelope (a receipt, typing, a sync message)."""
        self._emit({"envelope": envelope, "account": self.account})

    def attachment(self, data: bytes, filename: str, mime: str) -> dict[str, Any]:
        """An attachment as a ``dataMessage`` lists it; its bytes served by
        ``getAttachment``."""
        attachment_id = f"{uuid.uuid4().hex[:20]}.bin"
        self.attachments[attachment_id] = data
        return {"contentType": mime, "filename": filename, "id": attachment_id,
                "size": len(data), "width": None, "height": None, "caption": None,
                "uploadTimestamp": None}

    def fail(self, method: str, *, error: dict[str, Any] | None = None,
             result: dict[str, Any] | None = None, times: int = 1) -> None:
        with self._lock:
            self.failures.append(Failure(method, error, result, times))

    # --- what happened ---------------------------------------------------------------

    def of(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def texts(self, chat: str) -> list[str]:
        """Messages the account sent to ``chat`` (a number, or ``group.<id>``)."""
        return [c.params["message"] for c in self.of("send") if c.ok
                and _chat(c.params) == chat]

    # --- the daemon ------------------------------------------------------------------

    def cut(self) -> None:
        """End every open event stream (the daemon stays up)."""
        self.run(self.closing())

    def _emit(self, event: dict[str, Any]) -> None:

        async def put() -> None:
            sequence = self._buffer[-1][0] + 1 if self._buffer else 1
            line = f"id:{self._run_id}-{sequence}\nevent:receive\ndata:{json.dumps(event)}\n\n"
            self._buffer.append((sequence, line))
            for queue in list(self._streams):
                queue.put_nowait(line)

        self.run(put())

    def routes(self, app: web.Application) -> None:
        self._run_id, self._buffer = str(time.monotonic_ns()), deque(maxlen=1000)
        app.router.add_post("/api/v1/rpc", self._rpc)
        app.router.add_get("/api/v1/events", self._events)
        app.router.add_get("/api/v1/check", self._check)

    async def closing(self) -> None:
        for queue in list(self._streams):
            queue.put_nowait(None)
        await asyncio.sleep(0.05)

    async def _check(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("account", self.account) != self.account:
            return web.Response(status=400, text="Specified account does not exist")
        if self.paused:
            return web.Response(status=503, text="paused")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-cache"})
        await response.prepare(request)
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        last = request.headers.get("Last-Event-ID")
        if last is not None:  # an id of an earlier run, or unknown: everything buffered
            run, _, sequence = last.partition("-")
            after = int(sequence) if run == self._run_id and sequence.isdigit() else 0
            for number, kept in self._buffer:
                if number > after:
                    queue.put_nowait(kept)
        self._streams.add(queue)
        try:
            while True:
                try:
                    line = await asyncio.wait_for(queue.get(), 5)
                except TimeoutError:
                    line = ":\n"
                if line is None:
                    break
                await response.write(line.encode())
                self._note_handed(line)
        finally:
            self._streams.discard(queue)
        return response

    async def _rpc(self, request: web.Request) -> web.Response:
        body = await request.json()
        method, params = body.get("method", ""), dict(body.get("params") or {})
        failure = self._failure(method)
        if params.pop("account", self.account) != self.account:
            failure = Failure(method, {"code": -32602, "message":
                                       "Specified account does not exist"})
        with self._lock:
            self.calls.append(Call(method, params, failure is None))
        if failure is not None and failure.error is not None:
            return self._answer(body, error=failure.error)
        result = failure.result if failure is not None else self._result(method, params)
        if isinstance(result, dict) and "code" in result:
            return self._answer(body, error=result)
        return self._answer(body, result=result)

    def _note_handed(self, line: str) -> None:
        data = line.partition("\ndata:")[2]
        if data:
            stamp = json.loads(data)["envelope"]["timestamp"]
            self.handed.setdefault(stamp, time.monotonic())

    def _failure(self, method: str) -> Failure | None:
        with self._lock:
            failure = next((f for f in self.failures if f.method == method and f.times > 0),
                           None)
            if failure is not None:
                failure.times -= 1
        return failure

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "version":
            return {"version": VERSION}
        if method == "listAccounts":
            return [{"number": self.account}]
        if method in ("send", "sendTyping"):
            if not params.get("groupId") and not params.get("recipient"):
                return {"code": -1, "message": "No recipients given"}
            if not _styles_fit(params.get("textStyle") or [], params.get("message") or ""):
                return {"code": -1, "message": "Invalid text style"}
            return {"timestamp": next(self._clock), "results": [
                {"recipientAddress": {"number": r}, "type": "SUCCESS"}
                for r in params.get("recipient") or ["group"]]} if method == "send" else {}
        if method == "getAttachment":
            data = self.attachments.get(str(params.get("id")))
            if data is None:
                return {"code": -1, "message": "Attachment not found"}
            return {"data": base64.b64encode(data).decode()}
        return {"code": -32601, "message": "Method not implemented"}

    @staticmethod
    def _answer(body: dict[str, Any], **outcome: Any) -> web.Response:
        return web.json_response({"jsonrpc": "2.0", **outcome, "id": body.get("id")})


def _styles_fit(styles: list[str], message: str) -> bool:
    """Each ``start:length:STYLE`` is a known style inside the message (UTF-16 units)."""
    size = len(message.encode("utf-16-le")) // 2
    for style in styles:
        start, length, name = (style.split(":") + ["", "", ""])[:3]
        if not (start.isdigit() and length.isdigit() and name in STYLES
                and int(start) + int(length) <= size):
            return False
    return True


def _chat(params: dict[str, Any]) -> str:
    if params.get("groupId"):
        return f"group.{params['groupId']}"
    return str((params.get("recipient") or [""])[0])
