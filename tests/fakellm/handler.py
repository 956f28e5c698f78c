"""One HTTP exchange: record the request, take a turn, write it in the request's wire format."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from .script import Fault, Reply, StreamError, Truncated, Turn
from .wire import Wire

if TYPE_CHECKING:
    from .recording import RecordedRequest
    from .server import FakeLLM, _HTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked SSE, like the real APIs
    timeout = 30  # backstop: an idle keep-alive connection never blocks shutdown for longer
    disable_nagle_algorithm = True  # else each small response waits ~40 ms for a delayed ACK
    server: _HTTPServer

    @property
    def fake(self) -> FakeLLM:
        return self.server.fake

    def setup(self) -> None:
        super().setup()
        self.fake._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.fake._untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read ``FakeLLM.requests`` instead, and nothing echoes a header."""

    def do_GET(self) -> None:
        self._exchange()

    def do_POST(self) -> None:
        self._exchange()

    def _exchange(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        if self.command == "POST" and self.fake.audio.handles(path):
            status, kind, body = self.fake.audio.answer(
                path, {k.lower(): v for k, v in self.headers.items()}, raw)
            self._start(status, kind, {"Content-Length": str(len(body))})
            self.wfile.write(body)
            return
        wire = self.fake.route(path) if self.command == "POST" else None
        request = self.fake._record(self.command, path, dict(self.headers.items()), raw, wire)
        if self.command == "GET" and path.endswith("/models") and self.fake.models is not None:
            self._send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                for m in self.fake.models]})
            return
        if wire is None:
            self._refuse(404, f"fake LLM: no route for {self.command} {path}; "
                         f"POST one of {sorted(self.fake.wires)}")
            return
        if not isinstance(request.body, dict):
            self._refuse(400, f"fake LLM: request body to {path} is not a JSON object")
            return
        turn = self.fake._next_turn(request)
        if turn.delay and self.fake._stopping.wait(turn.delay):
            self.close_connection = True  # shutting down: abandon the answer
            return
        try:
            self._answer(wire, turn, request)
        except ConnectionError:
            self.close_connection = True  # the client gave up first (e.g. its timeout)
        finally:
            self.fake._done(request)

    def _answer(self, wire: Wire, turn: Turn, request: RecordedRequest) -> None:
        match turn:
            case Fault():
                self._send_error(wire, turn, _retry_headers(turn.retry_after))
            case StreamError() if request.stream:
                tail = wire.stream_error(turn.fault, turn.after_events)
                self._send_stream(wire, wire.stream(turn.reply, request), turn.after_events, tail)
            case StreamError():  # failed before answering: a plain HTTP error
                self._send_error(wire, turn.fault)
            case Truncated() if request.stream:
                self._send_stream(wire, wire.stream(turn.reply, request), turn.after_events)
            case Truncated():
                self._send_cut_json(wire.reply(turn.reply, request))
            case Reply() if request.stream:
                self._send_stream(wire, wire.stream(turn, request))
            case Reply():
                self._send_json(200, wire.reply(turn, request))

    def _refuse(self, status: int, message: str) -> None:
        self.fake._problem(message)
        body = {"error": {"message": message, "type": "invalid_request_error",
                          "param": None, "code": None}}
        self._send_json(status, body)

    def _send_error(self, wire: Wire, fault: Fault, headers: dict[str, str] | None = None) -> None:
        self._send_json(wire.error_status(fault), wire.error(fault),
                        {**wire.error_headers(fault), **(headers or {})})

    def _send_json(self, status: int, body: dict[str, Any],
                   headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self._start(status, "application/json", {"Content-Length": str(len(data)),
                                                  **(headers or {})})
        self.wfile.write(data)

    def _send_cut_json(self, body: dict[str, Any]) -> None:
        """Promise the whole body in ``Content-Length``, send half, hang up."""
        data = json.dumps(body, ensure_ascii=False).encode()
        self._start(200, "application/json", {"Content-Length": str(len(data))})
        self.wfile.write(data[: len(data) // 2])
        self._hang_up()

    def _send_stream(self, wire: Wire, events: Iterator[bytes], cut: int | None = None,
                     tail: bytes | None = None) -> None:
        """Events in HTTP chunks. At event ``cut``: send ``tail`` and end, or hang up without it."""
        self._start(200, wire.stream_content_type,
                    {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache"})
        for sent, event in enumerate(events):
            if sent == cut:
                if tail is None:
                    self._hang_up()  # no terminating chunk: the client sees an incomplete body
                    return
                self._send_chunk(tail)
                break
            self._send_chunk(event)
        self.wfile.write(b"0\r\n\r\n")

    def _send_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _start(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("x-request-id", self.fake.ids.new("req"))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _hang_up(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


def _retry_headers(retry_after: float | None) -> dict[str, str]:
    if retry_after is None:
        return {}
    return {"retry-after": f"{retry_after:g}", "retry-after-ms": str(int(retry_after * 1000))}
