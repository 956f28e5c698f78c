"""The fake LLM server: lifecycle, routing, recording and the script it answers from."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterable
from http.server import ThreadingHTTPServer
from types import TracebackType

from .anthropic import AnthropicMessages
from .audio import FakeAudio
from .bedrock import BedrockConverse
from .handler import Handler
from .openai_chat import OpenAIChat
from .recording import RecordedRequest
from .responses import OpenAIResponses
from .script import Fault, Responder, Script, ScriptExhausted, ScriptItem, Turn
from .wire import Ids, Wire


class FakeLLMError(AssertionError):
    """The test's script and the client's requests did not match (raised on exit)."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True  # server_close() joins every handler thread: nothing leaks

    def __init__(self, address: tuple[str, int], fake: FakeLLM):
        self.fake = fake
        super().__init__(address, Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients dropping pooled keep-alive connections is normal, not a failure."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeLLM:
    """A scripted LLM on loopback speaking OpenAI chat, Anthropic messages, OpenAI Responses
    and Bedrock Converse.

    Each request takes the next item of ``script``: a turn, or a responder called with the
    :class:`RecordedRequest`. When the script runs out, ``fallback`` answers; without one the
    client gets a 500 "fake LLM: script exhausted". With ``strict`` (the default), leaving the
    ``with`` block raises :class:`FakeLLMError` if that happened, a responder raised or an
    unknown path was requested.
    """

    def __init__(self, script: Iterable[ScriptItem] = (), *, fallback: Responder | None = None,
                 strict: bool = True, chunk_chars: int = 8, host: str = "127.0.0.1",
                 port: int = 0, models: Iterable[str] | None = None):
        self.script = Script(script, fallback)
        self.models = list(models) if models is not None else None
        """Model ids ``GET …/models`` lists (OpenAI's list format); None: no such route."""
        self.strict = strict
        self.ids = Ids()
        wires: list[Wire] = [cls(self.ids, chunk_chars)
                             for cls in (OpenAIChat, AnthropicMessages, OpenAIResponses,
                                         BedrockConverse)]
        self.wires: dict[str, Wire] = {path: wire for wire in wires for path in wire.paths}
        """Each format by the paths it serves (parameters shown as ``{modelId}``)."""
        self.audio = FakeAudio()
        """OpenAI's ``…/audio/transcriptions`` and ``…/audio/speech`` (``fakellm.audio``)."""
        self._address = (host, port)
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._answered: dict[int, float] = {}
        self._problems: list[str] = []
        self._connections: set[socket.socket] = set()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeLLM:
        self._server = _HTTPServer(self._address, self)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, name="fakellm", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, cut delays short, close every connection and join every thread."""
        if self._server is None or self._thread is None:
            return
        self._stopping.set()
        self._server.shutdown()
        with self._changed:
            connections = list(self._connections)
        for connection in connections:
            _shut(connection)
        self._server.server_close()
        self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
        if exc_type is None:
            self.check()

    def check(self) -> None:
        """Raise :class:`FakeLLMError` listing the problems seen, if strict and there were any."""
        problems = self.problems
        if self.strict and problems:
            raise FakeLLMError("fake LLM: " + "; ".join(problems))

    # -- addresses -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("fake LLM: not started; use `with FakeLLM(...) as llm:`")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._address[0]}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``api_base`` for litellm's ``openai/…`` models and ``litellm.responses``."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """``api_base`` for ``anthropic/…``: litellm appends ``/v1/messages`` itself."""
        return self.url

    @property
    def bedrock_base_url(self) -> str:
        """``api_base`` for ``bedrock/converse/…``: litellm appends ``/model/{id}/converse``."""
        return self.url

    def api_base(self, provider: str) -> str:
        """The ``api_base`` litellm needs for ``provider`` (``anthropic``, ``bedrock`` or
        OpenAI-style)."""
        if provider == "bedrock":
            return self.bedrock_base_url
        return self.anthropic_base_url if provider == "anthropic" else self.openai_base_url

    def route(self, path: str) -> Wire | None:
        """The wire format serving ``path``, if any."""
        return next((wire for wire in self.wires.values() if wire.handles(path)), None)

    # -- script and recording --------------------------------------------------------------

    def push(self, *items: ScriptItem) -> None:
        """Append turns or responders to the script, even while serving."""
        self.script.push(*items)

    def drop_pending(self) -> int:
        """Forget the scripted items no request took (a turn that ended before asking
        for them); how many there were."""
        return self.script.drop_pending()

    @property
    def pending(self) -> int:
        """Scripted items not yet consumed."""
        return self.script.pending

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._changed:
            return list(self._requests)

    @property
    def problems(self) -> list[str]:
        with self._changed:
            return list(self._problems)

    @property
    def spans(self) -> dict[int, tuple[float, float]]:
        """``(arrived, answered)`` of every request answered so far, by its index
        (``time.monotonic()``): when each model call was in flight."""
        with self._changed:
            return {r.index: (r.received_at, self._answered[r.index]) for r in self._requests
                    if r.index in self._answered}

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until ``count`` requests have arrived; raise ``TimeoutError`` otherwise."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"fake LLM: {len(self._requests)} of {count} requests "
                                   f"arrived within {timeout}s")
            return list(self._requests)

    # -- called by Handler threads ---------------------------------------------------------

    def _record(self, method: str, path: str, headers: dict[str, str], raw: bytes,
                wire: Wire | None) -> RecordedRequest:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._changed:
            request = RecordedRequest(len(self._requests), method, path,
                                      {k.lower(): v for k, v in headers.items()}, body,
                                      wire.name if wire else None, raw, time.monotonic())
            self._requests.append(request)
            self._changed.notify_all()
        return request

    def _next_turn(self, request: RecordedRequest) -> Turn:
        try:
            return self.script.next_turn(request)
        except ScriptExhausted:
            message = "fake LLM: script exhausted"
            detail = "add turns or a fallback"
        except Exception as error:  # a responder's bug must reach the test, not kill the thread
            message = f"fake LLM: responder failed: {error!r}"
            detail = "see the responder"
        self._problem(f"{message} at request {request.index} ({request.path}); {detail}")
        return Fault(500, message)

    def _done(self, request: RecordedRequest) -> None:
        """The answer to ``request`` is sent (or failed to be)."""
        with self._changed:
            self._answered[request.index] = time.monotonic()

    def _problem(self, message: str) -> None:
        with self._changed:
            self._problems.append(message)

    def _track(self, connection: socket.socket) -> None:
        with self._changed:
            self._connections.add(connection)
        if self._stopping.is_set():
            _shut(connection)  # accepted just before shutdown swept the open connections

    def _untrack(self, connection: socket.socket) -> None:
        with self._changed:
            self._connections.discard(connection)


def _shut(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the client
        connection.shutdown(socket.SHUT_RDWR)
