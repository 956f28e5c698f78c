"""A fake Telegram Bot API server on loopback, for the telegram platform's tests.

It speaks the Bot API's HTTP shape (``POST /bot<token>/<method>``, form or JSON
parameters, ``{"ok": ..., "result": ...}``), serves the files users sent (photos and
documents, voice notes: ``getFile``, then ``GET /file/bot<token>/<file_path>``), takes
voice notes sent (``sendVoice``, multipart as the real client uploads), records every call,
hands out scripted updates through long-polling ``getUpdates``, checks MarkdownV2 as Telegram does
(``Bad Request: can't parse entities`` for an unescaped reserved character), enforces
the 4096-character limit, and returns scripted errors, 429 with ``retry_after``
included. ``stop()`` and ``start()`` restart it on the same port.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qsl

RESERVED = set("_*[]()~`>#+-=|{}.!")
MAX_TEXT = 4096
MAX_DOWNLOAD = 20 * 1024 * 1024
"""The Bot API serves files of up to 20 MB through getFile."""


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class StoredFile:
    """A file a user sent: where ``getFile`` says it is, its bytes, its declared size."""

    path: str
    data: bytes
    size: int | None


Size = int | None | Literal["real"]


@dataclass
class Failure:
    method: str
    status: int
    description: str
    retry_after: int | None = None
    times: int = 1
    when: Callable[[dict[str, Any]], bool] = lambda params: True


@contextlib.contextmanager
def serving(token: str) -> Iterator[FakeBotAPI]:
    """A started ``FakeBotAPI`` for ``token``, stopped at the end."""
    api = FakeBotAPI(token).start()
    try:
        yield api
    finally:
        api.stop()


class FakeBotAPI:
    """One bot's API. ``push`` queues a message from a user; ``calls`` records requests."""

    def __init__(self, token: str, username: str = "hermes_test_bot", bot_id: int = 777000):
        self.token = token
        self.username = username
        self.bot_id = bot_id
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self._updates: list[dict[str, Any]] = []
        self.files: dict[str, StoredFile] = {}
        """Files users sent, by ``file_id``: their ``file_path`` and bytes."""
        self.downloads: list[str] = []
        """``file_path`` of every file downloaded (``GET /file/bot<token>/<path>``)."""
        self.handed: dict[int, float] = {}
        """When (``time.monotonic()``) each user message (by ``message_id``) first went out
        in a ``getUpdates`` answer: the moment the bot could know of it."""
        self._next_update = 1
        self._next_message = 100
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> FakeBotAPI:
        fake = self

        class Handler(_Handler):
            api = fake

        self._server = _Server(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop answering: the port is closed (long polls in flight are cut off)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            server.close_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- scripting ---------------------------------------------------------------

    def push(self, text: str, *, user_id: int = 42, username: str = "ada",
             chat_id: int | None = None, chat_type: str = "private",
             thread_id: int | None = None, reply_to_bot: bool = False,
             attached: dict[str, Any] | None = None) -> int:
        """Queue a message from a user; its ``message_id``. With ``attached`` (a
        ``photo``/``document`` field from ``photo`` or ``document``) ``text`` is its
        caption."""
        chat_id = user_id if chat_id is None else chat_id
        field = "caption" if attached else "text"
        with self._changed:
            self._next_message += 1
            message: dict[str, Any] = {
                "message_id": self._next_message, "date": int(time.time()),
                "chat": {"id": chat_id, "type": chat_type},
                "from": {"id": user_id, "is_bot": False, "first_name": username.title(),
                         "username": username}, **(attached or {})}
            if text or not attached:
                message[field] = text
            entities = _entities(text, self.username)
            if entities:
                message[f"{field}_entities" if attached else "entities"] = entities
            if thread_id is not None:
                message |= {"message_thread_id": thread_id, "is_topic_message": True}
            if reply_to_bot:
                message["reply_to_message"] = {
                    "message_id": 1, "date": int(time.time()), "text": "earlier answer",
                    "chat": message["chat"], "from": self._me()}
            self._updates.append({"update_id": self._next_update, "message": message})
            self._next_update += 1
            self._changed.notify_all()
            return int(message["message_id"])

    def photo(self, data: bytes, *, size: Size = "real") -> dict[str, Any]:
        """A ``photo`` field for ``push``: ``data`` stored as a file ``getFile`` serves, in
        two sizes as Telegram sends them (a thumbnail first, the largest last). ``size``:
        the ``file_size`` the message and ``getFile`` declare ("real": ``len(data)``;
        None: none on the message, the real one from ``getFile``)."""
        sizes = [self._store(data[:64], "photos/thumb.jpg") | {"width": 90, "height": 90},
                 self._store(data, "photos/file.jpg", size) | {"width": 1280,
                                                               "height": 960}]
        return {"photo": sizes}

    def document(self, data: bytes, file_name: str, mime_type: str | None,
                 *, size: Size = "real") -> dict[str, Any]:
        """A ``document`` field for ``push``: a file sent as is (not compressed)."""
        document = self._store(data, f"documents/{file_name}", size) | {
            "file_name": file_name}
        if mime_type is not None:
            document["mime_type"] = mime_type
        return {"document": document}

    def voice(self, data: bytes, *, duration: int = 1, size: Size = "real") -> dict[str, Any]:
        """A ``voice`` field for ``push``: a voice note (OGG/Opus) as Telegram sends it."""
        return {"voice": self._store(data, "voice/file.oga", size) | {
            "duration": duration, "mime_type": "audio/ogg"}}

    def voices(self, chat_id: int | str | None = None) -> list[bytes]:
        """The audio of every ``sendVoice`` that succeeded, to ``chat_id`` if given."""
        with self._changed:
            return [c.params["voice"] for c in self.calls if c.method == "sendVoice"
                    and c.params.get("ok") and (chat_id is None or
                                                str(c.params["chat_id"]) == str(chat_id))]

    def _store(self, data: bytes, path: str, size: Size = "real") -> dict[str, Any]:
        declared = len(data) if size == "real" else size
        with self._changed:
            number = len(self.files) + 1
            file_id = f"file-{number}"
            stem, dot, extension = path.rpartition(".")
            self.files[file_id] = StoredFile(f"{stem}_{number}{dot}{extension}", data,
                                             declared)
        return {"file_id": file_id, "file_unique_id": f"u{file_id}"} | (
            {"file_size": declared} if declared is not None else {})

    def fail(self, method: str, status: int, description: str, *, retry_after: int | None = None,
             times: int = 1, when: Callable[[dict[str, Any]], bool] = lambda params: True
             ) -> None:
        """The next ``times`` calls of ``method`` (for which ``when`` holds) fail so."""
        with self._changed:
            self.failures.append(Failure(method, status, description, retry_after, times, when))

    # --- what happened -----------------------------------------------------------

    def sent(self, chat_id: int | str | None = None) -> list[Call]:
        """``sendMessage`` calls that succeeded, to ``chat_id`` if given."""
        with self._changed:
            return [c for c in self.calls if c.method == "sendMessage" and c.params.get("ok")
                    and (chat_id is None or str(c.params["chat_id"]) == str(chat_id))]

    def texts(self, chat_id: int | str | None = None) -> list[str]:
        return [str(c.params["text"]) for c in self.sent(chat_id)]

    def of(self, method: str) -> list[Call]:
        with self._changed:
            return [c for c in self.calls if c.method == method]

    # --- the API -----------------------------------------------------------------

    def _me(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": "Hermes",
                "username": self.username}

    def answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        call = Call(method, params)
        with self._changed:
            self.calls.append(call)
            failure = self._scripted_failure(method, params)
        if failure is not None:
            return failure
        if method == "getUpdates":
            return 200, {"ok": True, "result": self._poll(params)}
        handler = getattr(self, f"_{method}", None)
        if handler is None:
            return _error(404, "Not Found: method not found")
        status, body = handler(params)
        call.params["ok"] = status == 200
        return status, body

    def _scripted_failure(self, method: str, params: dict[str, Any]
                          ) -> tuple[int, dict[str, Any]] | None:
        for failure in self.failures:
            if failure.method == method and failure.times > 0 and failure.when(params):
                failure.times -= 1
                return _error(failure.status, failure.description, failure.retry_after)
        return None

    def _poll(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        deadline = time.monotonic() + min(float(params.get("timeout") or 0), 5.0)
        with self._changed:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
            while not self._updates and self.running and time.monotonic() < deadline:
                self._changed.wait(deadline - time.monotonic())
            now = time.monotonic()
            for update in self._updates:
                self.handed.setdefault(int(update["message"]["message_id"]), now)
            return list(self._updates)

    def _getMe(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:  # noqa: N802
        return 200, {"ok": True, "result": self._me()}

    def _getFile(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:  # noqa: N802
        stored = self.files.get(str(params.get("file_id")))
        if stored is None:
            return _error(400, "Bad Request: invalid file_id")
        if len(stored.data) > MAX_DOWNLOAD:
            return _error(400, "Bad Request: file is too big")
        result = {"file_id": params["file_id"], "file_unique_id": f"u{params['file_id']}",
                  "file_path": stored.path}
        result["file_size"] = len(stored.data) if stored.size is None else stored.size
        return 200, {"ok": True, "result": result}

    def download(self, path: str) -> bytes | None:
        """The bytes of ``file_path`` (recorded as downloaded), None when unknown."""
        with self._changed:
            self.downloads.append(path)
        return next((file.data for file in self.files.values() if file.path == path), None)

    def _sendChatAction(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:  # noqa: N802
        return 200, {"ok": True, "result": True}

    def _sendVoice(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:  # noqa: N802
        voice = params.get("voice")
        if not isinstance(voice, bytes) or not voice.startswith(b"OggS"):
            return _error(400, "Bad Request: wrong file type: voice must be OGG/Opus")
        with self._changed:
            self._next_message += 1
            number = self._next_message
        chat = {"id": int(params["chat_id"]), "type": "private"}
        return 200, {"ok": True, "result": {"message_id": number, "date": int(time.time()),
                                            "chat": chat, "from": self._me(), "voice": {
                                                "file_id": f"sent-{number}",
                                                "file_unique_id": f"usent-{number}",
                                                "duration": 1}}}

    def _sendMessage(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:  # noqa: N802
        text = str(params.get("text", ""))
        plain = text
        if params.get("parse_mode") == "MarkdownV2":
            problem, plain = check_markdown_v2(text)
            if problem:
                return _error(400, f"Bad Request: can't parse entities: {problem}")
        if not plain.strip() or len(plain.encode("utf-16-le")) // 2 > MAX_TEXT:
            return _error(400, "Bad Request: message is too long" if plain.strip() else
                          "Bad Request: message text is empty")
        with self._changed:
            self._next_message += 1
            number = self._next_message
        chat = {"id": int(params["chat_id"]), "type": "private"}
        return 200, {"ok": True, "result": {"message_id": number, "date": int(time.time()),
                                            "chat": chat, "from": self._me(), "text": plain}}


def check_markdown_v2(text: str) -> tuple[str | None, str]:
    """``(error, parsed text)`` as Telegram's parser sees MarkdownV2 (closely enough):
    a reserved character must be escaped outside entities, entities must close."""
    open_: list[str] = []
    plain: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        code = bool(open_) and open_[-1] in ("`", "```")
        if char == "\\" and i + 1 < len(text):
            plain.append(text[i + 1])
            i += 2
            continue
        if code:
            closing = open_[-1]
            if text.startswith(closing, i):
                open_.pop()
                i += len(closing)
            else:
                if char == "`":
                    return f"Character '`' is reserved (offset {i})", ""
                plain.append(char)
                i += 1
            continue
        token = next((t for t in ("```", "__", "||", "`", "*", "_", "~") if text.startswith(t, i)),
                     None)
        if token is not None:
            if open_ and open_[-1] == token:
                open_.pop()
            else:
                open_.append(token)
            i += len(token)
            continue
        if char == "[":
            end = _link_end(text, i)
            if end is None:
                return f"can't find end of the URL for a text link at byte offset {i}", ""
            plain.append(text[i + 1:text.index("](", i)])
            i = end
            continue
        if char == ">" and (i == 0 or text[i - 1] == "\n"):
            i += 1
            continue
        if char in RESERVED:
            return (f"Character '{char}' is reserved and must be escaped with the preceding "
                    "'\\'"), ""
        plain.append(char)
        i += 1
    if open_:
        return f"can't find end of {open_[-1]!r} entity", ""
    return None, "".join(plain)


def _link_end(text: str, start: int) -> int | None:
    middle = text.find("](", start)
    if middle < 0:
        return None
    i = middle + 2
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == ")":
            return i + 1
        else:
            i += 1
    return None


def _entities(text: str, username: str) -> list[dict[str, Any]]:
    found = []
    for word in (f"@{username}",):
        at = text.find(word)
        if at >= 0:
            found.append({"type": "mention", "offset": _utf16(text[:at]), "length": _utf16(word)})
    if text.startswith("/"):
        command = text.split()[0]
        found.append({"type": "bot_command", "offset": 0, "length": _utf16(command)})
    return found


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _error(status: int, description: str, retry_after: int | None = None
           ) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return status, body


class _Server(ThreadingHTTPServer):
    """Keeps its connections, so that ``close_all`` can cut keep-alive ones as a real
    server's restart does (``shutdown`` alone leaves them served)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]):
        super().__init__(address, handler)
        self.connections: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.connections.discard(request)
        super().shutdown_request(request)

    def close_all(self) -> None:
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (the gateway stopping) is not an error here."""


class _Handler(BaseHTTPRequestHandler):
    api: FakeBotAPI
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """Headers and body leave in separate writes: with Nagle's algorithm the body waited
    for the client's delayed ACK of the headers (40 ms an answer; real servers set
    TCP_NODELAY)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def do_POST(self) -> None:  # noqa: N802
        self._serve()

    def do_GET(self) -> None:  # noqa: N802
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        prefix = f"/bot{self.api.token}/"
        if self.path.startswith(f"/file/bot{self.api.token}/"):
            self._send_file(self.path.split("/", 3)[3])
            return
        if not self.path.startswith(prefix):
            status, body = _error(401, "Unauthorized")
        else:
            status, body = self.api.answer(self.path[len(prefix):], _params(self.headers, raw))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


    def _send_file(self, path: str) -> None:
        data = self.api.download(path)
        self.send_response(200 if data is not None else 404)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data or b"")))
        self.end_headers()
        self.wfile.write(data or b"")


def _multipart(content_type: str, raw: bytes) -> dict[str, Any]:
    """A ``multipart/form-data`` body: uploaded files as bytes, other fields as text."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    params: dict[str, Any] = {}
    for part in message.iter_parts():
        name = str(part.get_param("name", header="content-disposition") or "")
        data = part.get_payload(decode=True) or b""
        params[name] = data if part.get_filename() is not None else data.decode()
    return params


def _params(headers: Any, raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    if "json" in (headers.get("content-type") or ""):
        return dict(json.loads(raw))
    if "multipart/form-data" in (headers.get("content-type") or ""):
        return _multipart(headers.get("content-type"), raw)
    params: dict[str, Any] = {}
    for key, value in parse_qsl(raw.decode(), keep_blank_values=True):
        try:
            params[key] = json.loads(value) if value[:1] in "[{" else value
        except ValueError:
            params[key] = value
    return params
