"""The guarded fetch below web_extract: no DNS rebinding between check and connect, and
the limits measured on the real client against the local test site."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import tracemalloc
from typing import Any

import httpcore
import pytest

from hermes.web.addresses import AddressPolicy, BlockedAddress
from hermes.web.fetch import Fetcher, FetchError, FetchLimits
from webpages import WebPages, webpages  # noqa: F401 — the fixture

PUBLIC = "93.184.215.14"
PAGE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 20\r\n\r\n"
        b"<p>public answer</p>")


class RecordingNetwork(httpcore.NetworkBackend):
    """Sockets replaced: records where each connection went and answers ``PAGE``."""

    def __init__(self) -> None:
        self.connections: list[tuple[str, int]] = []

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        self.connections.append((host, port))
        return httpcore.MockStream([PAGE])


def test_a_rebinding_name_connects_only_to_the_address_that_was_checked() -> None:
    # DNS rebinding: a name whose first answer is public (what a checker sees) and whose
    # every later answer is loopback (what a client resolving again would connect to).
    # The resolver is injected at the AddressPolicy level because that is where names
    # are resolved, once per connection; the sockets are a recording backend, so no
    # real network is used. The fetcher must connect to the address it checked.
    answers: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        answers.append(PUBLIC if not answers else "127.0.0.1")
        return [answers[-1]]

    network = RecordingNetwork()
    fetcher = Fetcher(AddressPolicy(resolver=rebinding), FetchLimits(timeout=2), network)
    page = fetcher.fetch("http://rebind.example/")
    assert page.body == b"<p>public answer</p>"
    assert network.connections == [(PUBLIC, 80)]
    assert answers == [PUBLIC]  # resolved once: the check and the connection are one
    # asked again, the name now answers loopback: refused before any connection
    with pytest.raises(BlockedAddress, match=r"rebind\.example:80 \(127\.0\.0\.1\): a loopback"):
        fetcher.fetch("http://rebind.example/")
    assert network.connections == [(PUBLIC, 80)]


def test_a_name_with_a_private_address_among_its_answers_is_not_connected_to() -> None:
    network = RecordingNetwork()
    policy = AddressPolicy(resolver=lambda host, port: [PUBLIC, "10.0.0.7"])
    with pytest.raises(BlockedAddress, match="10.0.0.7"):
        Fetcher(policy, FetchLimits(), network).fetch("https://mixed.example/")
    assert network.connections == []


def test_https_keeps_the_name_for_tls_while_connecting_to_the_checked_address() -> None:
    seen: list[tuple[str, str | None]] = []

    class TlsStream(httpcore.MockStream):
        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> httpcore.NetworkStream:
            seen.append(("tls", server_hostname))
            return self

    class Network(RecordingNetwork):
        def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
            seen.append(("tcp", host))
            return TlsStream([PAGE])

    policy = AddressPolicy(resolver=lambda host, port: [PUBLIC])
    Fetcher(policy, FetchLimits(timeout=2), Network()).fetch("https://docs.example/x")
    assert seen == [("tcp", PUBLIC), ("tls", "docs.example")]


def test_the_timeout_covers_the_whole_request(webpages: WebPages) -> None:  # noqa: F811
    fetcher = Fetcher(AddressPolicy([webpages.allow]), FetchLimits(timeout=1.0))
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"within web\.timeout \(1 s\)"):
        fetcher.fetch(webpages.url("/never"))
    assert 0.9 <= time.monotonic() - started < 2.0


def test_a_big_page_stops_being_read_at_max_bytes(webpages: WebPages) -> None:  # noqa: F811
    fetcher = Fetcher(AddressPolicy([webpages.allow]), FetchLimits(max_bytes=200_000))
    with pytest.raises(FetchError, match=r"larger than web\.max_bytes \(200000 bytes\)"):
        fetcher.fetch(webpages.url("/big?bytes=5000000"))  # chunked: no length to refuse by


@pytest.mark.parametrize("raw", ["0", "1"])
def test_a_deflated_page_is_read_with_or_without_its_zlib_header(
        webpages: WebPages, raw: str) -> None:  # noqa: F811
    fetcher = Fetcher(AddressPolicy([webpages.allow]), FetchLimits())
    assert b"Millbrook" in fetcher.fetch(webpages.url(f"/deflated?raw={raw}")).body


@pytest.mark.parametrize("layers", [1, 2])
def test_a_compression_bomb_is_refused_without_being_inflated(
        webpages: WebPages, layers: int) -> None:  # noqa: F811
    """256 MiB of zeros in 2 KB (gzip twice) or 256 KB: max_bytes counts decoded bytes
    and no more than a chunk is inflated past it (it inflated the whole inner layer)."""
    fetcher = Fetcher(AddressPolicy([webpages.allow]), FetchLimits(max_bytes=1_000_000))
    tracemalloc.start()
    try:
        expected = "larger than web.max_bytes" if layers == 1 else "gzip, gzip is not read"
        with pytest.raises(FetchError, match=expected):
            fetcher.fetch(webpages.url(f"/gzip-bomb?layers={layers}"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000


def test_registering_web_extract_loads_no_http_client_nor_extractor() -> None:
    code = ("import json, sys\nfrom hermes.web.extract_tool import web_extract_tool\n"
            "web_extract_tool({'allow_private': ['127.0.0.1:8080']})\n"
            "print(json.dumps(sorted(m for m in ('httpx', 'httpcore', 'trafilatura', 'lxml')"
            " if m in sys.modules)))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, timeout=60).stdout
    assert json.loads(shown) == []


def test_a_name_server_that_never_answers_costs_the_request_its_timeout() -> None:
    never = threading.Event()

    def silent(host: str, port: int) -> list[str]:
        never.wait(30)
        return [PUBLIC]

    fetcher = Fetcher(AddressPolicy(resolver=silent), FetchLimits(timeout=0.5),
                      RecordingNetwork())
    started = time.monotonic()
    try:
        with pytest.raises(FetchError, match=r"within web\.timeout \(0\.5 s\)"):
            fetcher.fetch("http://slow-dns.example/")
        assert time.monotonic() - started < 1.5
    finally:
        never.set()


class ScriptedNetwork(RecordingNetwork):
    """Each connection answers the next of ``answers`` and records what was sent on it."""

    def __init__(self, answers: list[bytes]) -> None:
        super().__init__()
        self.answers = answers
        self.sent: list[bytes] = []

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        self.connections.append((host, port))
        sent = self.sent
        sent.append(b"")

        class Stream(httpcore.MockStream):
            def write(self, buffer: bytes, timeout: float | None = None) -> None:
                sent[-1] += buffer

        return Stream([self.answers[len(self.sent) - 1]])


def test_cookies_a_redirect_sets_go_on_to_the_next_hop_and_no_further() -> None:
    """A consent or login redirect that sets a cookie and wants it back (as httpx's own
    client sent it); the request asks only for encodings the fetcher can decode."""
    redirect = (b"HTTP/1.1 302 Found\r\nLocation: /page\r\nConnection: close\r\n"
                b"Set-Cookie: consent=yes; Path=/\r\nContent-Length: 0\r\n\r\n")
    network = ScriptedNetwork([redirect, PAGE])
    policy = AddressPolicy(resolver=lambda host, port: [PUBLIC])
    page = Fetcher(policy, FetchLimits(timeout=2), network).fetch("http://news.example/a")
    assert page.body == b"<p>public answer</p>" and page.url == "http://news.example/page"
    first, second = (request.lower() for request in network.sent)
    assert first.startswith(b"get /a http/1.1\r\n") and b"cookie:" not in first
    assert b"\r\nconnection: close\r\n" in first  # the pool lives for this fetch only
    assert second.startswith(b"get /page http/1.1\r\n")
    assert b"\r\ncookie: consent=yes\r\n" in second
    assert b"\r\nhost: news.example\r\n" in second
    assert b"\r\naccept-encoding: gzip, deflate\r\n" in second
