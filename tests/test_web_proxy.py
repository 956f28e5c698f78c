"""The browser's address guard (hermes.web.proxy) alone: real HTTP through it with httpx
and raw sockets, against origin servers on loopback that count what reaches them."""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from hermes.web.addresses import AddressPolicy
from hermes.web.proxy import (
    GuardProxy,
    Limits,
    chromium_args,
    playwright_proxy,
    start_guard_proxy,
)

BIG = 3_000_000


class Origin(ThreadingHTTPServer):
    """A loopback origin that counts requests and echoes what it got."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), OriginHandler)
        self.hits: list[tuple[str, str, str | None, bytes]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class OriginHandler(BaseHTTPRequestHandler):
    server: Origin

    def log_message(self, *_: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.hits.append((self.command, self.path, self.headers.get("Host"), body))
        reply = b"x" * BIG if self.path == "/big" else (
            f"origin {self.server.port} {self.command} {self.path} got {len(body)}; "
            f"proxy-auth={self.headers.get('Proxy-Authorization')}").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = _answer


@pytest.fixture(scope="module")
def allowed() -> Iterator[Origin]:
    server = Origin()
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def gateway() -> Iterator[Origin]:
    """Another loopback port, like the gateway's: nothing may reach it."""
    server = Origin()
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def guard(allowed: Origin) -> Iterator[GuardProxy]:
    with start_guard_proxy(AddressPolicy([f"127.0.0.1:{allowed.port}"])) as proxy:
        yield proxy


def client(guard: GuardProxy, password: str | None = None) -> httpx.Client:
    host = guard.url.removeprefix("http://")
    secret = guard.password if password is None else password
    return httpx.Client(proxy=f"http://{guard.username}:{secret}@{host}", timeout=20,
                        trust_env=False)


def raw(guard: GuardProxy, head: str, *, auth: bool = True) -> tuple[socket.socket, bytes]:
    """Send ``head`` (CRLF lines, no final blank line) to the proxy; the socket and the
    first bytes of its answer."""
    host, port = guard.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    if auth:
        token = base64.b64encode(f"{guard.username}:{guard.password}".encode()).decode()
        head += f"\r\nProxy-Authorization: Basic {token}"
    sock.sendall((head + "\r\n\r\n").encode())
    return sock, sock.recv(65536)


def test_an_allowed_origin_is_reached_and_bodies_stream_both_ways(
        guard: GuardProxy, allowed: Origin) -> None:
    with client(guard) as http:
        got = http.post(f"http://127.0.0.1:{allowed.port}/form?q=1", content=b"a=1&b=2")
        big = http.get(f"http://127.0.0.1:{allowed.port}/big")
    assert got.status_code == 200
    # the origin sees origin-form, its own Host, the body, and never the proxy's secret
    assert got.text.startswith(f"origin {allowed.port} POST /form?q=1 got 7; proxy-auth=None")
    assert len(big.content) == BIG
    assert guard.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(("target", "reason"), [
    ("http://127.0.0.1:{gateway}/", "loopback"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://localhost:{gateway}/", "loopback"),
    ("http://2130706433:{gateway}/", "loopback"),
    ("http://metadata.google.internal/computeMetadata/v1/", "metadata"),
])
def test_refused_targets_get_a_403_naming_the_reason_and_are_never_reached(
        guard: GuardProxy, gateway: Origin, target: str, reason: str) -> None:
    guard.take_refusals()
    with client(guard) as http:
        got = http.get(target.format(gateway=gateway.port) + "?token=s3cret")
    assert got.status_code == 403
    assert got.text.startswith("blocked: ") and reason in got.text
    assert gateway.hits == []
    [refusal] = guard.take_refusals()
    assert reason in refusal.reason and str(refusal).startswith("blocked: ")
    assert "s3cret" not in refusal.target


def test_connect_tunnels_to_allowed_origins_only(guard: GuardProxy, allowed: Origin,
                                                 gateway: Origin) -> None:
    sock, answer = raw(guard, f"CONNECT 127.0.0.1:{gateway.port} HTTP/1.1")
    sock.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"loopback" in answer
    sock, answer = raw(guard, "CONNECT 169.254.169.254:443 HTTP/1.1")
    sock.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"metadata" in answer
    sock, answer = raw(guard, f"CONNECT [::1]:{gateway.port} HTTP/1.1")
    sock.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"loopback" in answer
    sock, answer = raw(guard, f"GET http://::1:{gateway.port}/ HTTP/1.1")
    sock.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"not a host and port" in answer
    assert gateway.hits == []
    sock, answer = raw(guard, f"CONNECT 127.0.0.1:{allowed.port} HTTP/1.1")
    with sock:
        assert answer == b"HTTP/1.1 200 Connection Established\r\n\r\n"
        # the tunnel carries whatever the client speaks through it (here plain HTTP)
        sock.sendall(b"GET /tunnelled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = b"".join(iter(lambda: sock.recv(65536), b""))
    assert b"GET /tunnelled" in reply


def test_without_the_launch_secret_the_proxy_answers_407(guard: GuardProxy,
                                                        allowed: Origin) -> None:
    before = len(allowed.hits)
    sock, answer = raw(guard, f"GET http://127.0.0.1:{allowed.port}/ HTTP/1.1", auth=False)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 407")
    assert b'Proxy-Authenticate: Basic realm="hermes-browser"' in answer
    with client(guard, password="guessed") as http:
        assert http.get(f"http://127.0.0.1:{allowed.port}/").status_code == 407
    sock, answer = raw(guard, f"CONNECT 127.0.0.1:{allowed.port} HTTP/1.1", auth=False)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 407")
    assert len(allowed.hits) == before


def test_only_http_requests_and_tunnels_pass(guard: GuardProxy) -> None:
    sock, answer = raw(guard, "GET ftp://example.org/file HTTP/1.1")
    sock.close()
    assert answer.startswith(b"HTTP/1.1 403") and b"only http:// requests" in answer
    sock, answer = raw(guard, "NONSENSE")
    sock.close()
    assert answer.startswith(b"HTTP/1.1 400")


def test_the_proxy_connects_to_the_address_it_checked(allowed: Origin) -> None:
    """A DNS answer that changes between requests (rebinding): each request is checked
    on its own answer, and the connection goes to that checked address, never to the
    name again (rebind.test resolves nowhere but in this resolver)."""
    answers = iter([["127.0.0.1"], ["169.254.169.254"]])
    asked: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return next(answers)

    policy = AddressPolicy([f"127.0.0.1:{allowed.port}"], resolver=resolver)
    with start_guard_proxy(policy) as proxy, client(proxy) as http:
        first = http.get(f"http://rebind.test:{allowed.port}/one")
        second = http.get(f"http://rebind.test:{allowed.port}/two")
    assert first.status_code == 200 and "GET /one" in first.text
    assert allowed.hits[-1][2] == f"rebind.test:{allowed.port}"
    assert second.status_code == 403 and "metadata" in second.text
    assert asked == [("rebind.test", allowed.port)] * 2


def test_a_client_that_sends_no_request_is_dropped_after_the_head_timeout() -> None:
    with start_guard_proxy(AddressPolicy(), Limits(head_timeout=0.3)) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            start = time.monotonic()
            assert sock.recv(10) == b""
        assert time.monotonic() - start < 5


def test_a_tunnel_where_nothing_moves_is_closed_after_the_idle_timeout(
        allowed: Origin) -> None:
    policy = AddressPolicy([f"127.0.0.1:{allowed.port}"])
    with start_guard_proxy(policy, Limits(idle_timeout=0.3)) as proxy:
        sock, answer = raw(proxy, f"CONNECT 127.0.0.1:{allowed.port} HTTP/1.1")
        with sock:
            assert answer.startswith(b"HTTP/1.1 200")
            start = time.monotonic()
            assert sock.recv(10) == b""  # the origin waits for a request that never comes
        assert time.monotonic() - start < 5


def test_close_stops_listening() -> None:
    proxy = start_guard_proxy(AddressPolicy())
    port = int(proxy.url.rsplit(":", 1)[1])
    proxy.close()
    proxy.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_launch_settings_send_everything_through_the_guard(guard: GuardProxy) -> None:
    args = chromium_args(guard)
    assert f"--proxy-server={guard.url}" in args
    assert "--proxy-bypass-list=<-loopback>" in args and "--disable-quic" in args
    assert "--force-webrtc-ip-handling-policy=disable_non_proxied_udp" in args
    assert "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1" in args
    assert playwright_proxy(guard) == {"server": guard.url, "bypass": "<-loopback>",
                                       "username": guard.username,
                                       "password": guard.password}


def test_each_client_name_takes_its_own_refusals(guard: GuardProxy, gateway: Origin) -> None:
    """Two browser contexts (two sessions) log in with their own names: neither hears of
    the other's blocked requests."""
    guard.take_refusals()
    host = guard.url.removeprefix("http://")
    for name in ("session-a", "session-b"):
        settings = playwright_proxy(guard, name)
        with httpx.Client(proxy=f"http://{settings['username']}:{settings['password']}@{host}",
                          trust_env=False) as http:
            assert http.get(f"http://127.0.0.1:{gateway.port}/{name}").status_code == 403
    [mine] = guard.take_refusals("session-b")
    assert mine.target.endswith("/session-b") and mine.client == "session-b"
    assert [r.client for r in guard.take_refusals()] == ["session-a"]
    with pytest.raises(ValueError, match="letters, digits"):
        playwright_proxy(guard, "a b")
    sock, answer = raw(guard, f"GET http://127.0.0.1:{gateway.port}/ HTTP/1.1\r\n"
                       "Proxy-Authorization: Basic "
                       + base64.b64encode(b"a b:" + guard.password.encode()).decode(),
                       auth=False)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 407")
