"""Slow clients cannot hold the gateway's listeners (issue 25, point 13), over real sockets
against a real `hermes gateway run` with short deadlines: a request's headers must arrive
whole within `header_timeout`, its body within `read_timeout` (not reset by each byte),
and one client address may hold at most `max_client_connections` connections while
another is still served. The API server's listener and a webhook listener of its own
are both checked. Each test connects from its own loopback address (127.0.0.x), so the
connections of one never count against another's."""

from __future__ import annotations

import json
import os
import select
import socket
import time
from collections.abc import Iterator

import pytest

from conftest import stop_servers, wait_until
from fakellm import FakeLLM, Reply
from gateway_support import KEY, gateway
from messaging_support import WEBHOOK_SECRET, configure_messaging, webhook_platform, webhook_url

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 2.0
PER_CLIENT = 4
LIMITS = {"header_timeout": HEADER_TIMEOUT, "read_timeout": BODY_TIMEOUT,
          "max_client_connections": PER_CLIENT}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    """One gateway for the module: ``{"api": port, "webhook": port}``."""
    user = tmp_path_factory.mktemp("slow") / "user"
    user.mkdir()
    environ = {"HOME": str(user), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8",
               "HERMES_NO_DAEMON": "1"}
    root = user / ".hermes"
    with FakeLLM(fallback=lambda request: Reply(text="fine"), strict=False) as llm:
        configure_messaging(root, llm.openai_base_url, {
            "api_server": {"kind": "api_server", "token": "${secret:API_SERVER_KEY}",
                           "settings": {"port": 0, **LIMITS}},
            "webhook": webhook_platform({"ping": {"prompt": "{q}"}}, **LIMITS)},
            {"API_SERVER_KEY": KEY, "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
        try:
            with gateway(environ, root) as gw:
                yield {"api": gw.port, "webhook": _port(webhook_url(gw))}
        finally:
            stop_servers(user)


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def connect(port: int, source: str) -> socket.socket:
    """A connection to the listener from loopback address ``source``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(15)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def closed(sock: socket.socket, wait: float = 0.0) -> bytes | None:
    """Once the server sends something (within ``wait`` seconds): all it sends until it
    closes the connection; None while it is silent."""
    readable, _, _ = select.select([sock], [], [], wait)
    if not readable:
        return None
    sock.settimeout(5)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data or b"(closed)"


def feed_until_closed(sock: socket.socket, piece: bytes, every: float, limit: float
                      ) -> tuple[float, int, bytes]:
    """Send ``piece`` every ``every`` seconds until the server answers and closes (or
    ``limit`` seconds pass): the seconds it took, the pieces sent, and the answer."""
    start, sent = time.monotonic(), 0
    while time.monotonic() - start < limit:
        try:
            sock.sendall(piece)
            sent += 1
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed: read what it said
        answer = closed(sock, every)
        if answer is not None:
            return time.monotonic() - start, sent, answer
    raise AssertionError(f"still open after {limit} s ({sent} pieces sent)")


def request_head(port: int, path: str, extra: bytes = b"") -> bytes:
    return (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1:" + str(port).encode()
            + b"\r\nAuthorization: Bearer " + KEY.encode()
            + b"\r\nContent-Type: application/json\r\n" + extra)


@pytest.mark.parametrize("listener", ["api", "webhook"])
def test_headers_that_never_end_are_cut_at_the_header_deadline(served: dict[str, int],
                                                               listener: str) -> None:
    port = served[listener]
    source = {"api": "127.0.0.11", "webhook": "127.0.0.12"}[listener]
    with connect(port, source) as sock:
        sock.sendall(request_head(port, "/v1/chat/completions"))
        took, sent, _ = feed_until_closed(sock, b"X-Slow: a\r\n", 0.25, 10)
    assert sent >= 2  # it kept sending: not an idle timeout
    assert HEADER_TIMEOUT - 0.3 <= took <= HEADER_TIMEOUT + 2.5, took


@pytest.mark.parametrize("listener", ["api", "webhook"])
def test_a_connection_that_sends_nothing_is_closed(served: dict[str, int],
                                                   listener: str) -> None:
    source = {"api": "127.0.0.13", "webhook": "127.0.0.14"}[listener]
    with connect(served[listener], source) as sock:
        start = time.monotonic()
        wait_until(lambda: closed(sock), 10, "the idle connection closed")
    assert time.monotonic() - start <= HEADER_TIMEOUT + 2.5


@pytest.mark.parametrize(("listener", "path"), [("api", "/v1/chat/completions"),
                                                ("webhook", "/webhooks/ping")])
def test_a_trickling_body_is_cut_at_the_body_deadline(served: dict[str, int], listener: str,
                                                      path: str) -> None:
    port = served[listener]
    source = {"api": "127.0.0.15", "webhook": "127.0.0.16"}[listener]
    with connect(port, source) as sock:
        sock.sendall(request_head(port, path, b"Content-Length: 100\r\n\r\n"))
        took, sent, answer = feed_until_closed(sock, b" ", 1.0, 12)
    assert sent >= 2  # one byte a second never stalls for the whole deadline
    assert BODY_TIMEOUT - 0.3 <= took <= BODY_TIMEOUT + 2.5, took
    assert answer.startswith(b"HTTP/1.1 408"), answer


def ask_health(sock: socket.socket, port: int) -> bytes:
    """GET /health on ``sock``, kept alive; the answer's status line."""
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("listener", ["api", "webhook"])
def test_one_address_holds_at_most_the_cap_while_another_is_served(served: dict[str, int],
                                                                   listener: str) -> None:
    port = served[listener]
    crowd, other = {"api": ("127.0.0.17", "127.0.0.18"),
                    "webhook": ("127.0.0.19", "127.0.0.20")}[listener]
    held = [connect(port, crowd) for _ in range(PER_CLIENT)]
    try:  # kept alive after a request: they still count
        assert all(ask_health(sock, port) == b"HTTP/1.1 200 OK" for sock in held)
        with connect(port, crowd) as extra:
            answer = wait_until(lambda: closed(extra), 10, "the extra connection refused")
        assert isinstance(answer, bytes) and answer.startswith(b"HTTP/1.1 503"), answer
        error = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
        assert error["code"] == "too_many_connections"
        assert "max_client_connections" in error["message"]
        with connect(port, other) as elsewhere:
            assert ask_health(elsewhere, port) == b"HTTP/1.1 200 OK"
    finally:
        for sock in held:
            sock.close()

    def served_again() -> bool:
        with connect(port, crowd) as sock:
            return ask_health(sock, port) == b"HTTP/1.1 200 OK"

    assert wait_until(served_again, 10, "the address served again once its connections close")
