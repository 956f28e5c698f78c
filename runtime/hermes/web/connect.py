"""The HTTP side of the fetcher (imported only when a page is fetched).

httpcore's connection pool asks its network backend to ``connect_tcp(host, port)``.
``GuardedBackend`` answers by resolving ``host`` through the ``AddressPolicy`` and
connecting to one of the addresses it checked, so the address that was judged is the
address connected to (no second DNS lookup to rebind). TLS still names the host (SNI and
certificate check use the URL's name; ``Host`` is the URL's). Every read, write and
connect waits at most until the request's deadline, so ``web.timeout`` bounds the whole
request, not each step.

The request goes to httpcore's pool directly, with httpx's URL parsing and header and
cookie types: httpx's client layer above it (auth, event hooks, its own redirect and
decoding machinery, none of which a guarded GET uses) cost as much CPU as the request
itself (``bench/web.py``). Redirects are followed here, hop by hop, with the cookies
they set, as httpx's client did.
"""

from __future__ import annotations

import email.message
import logging
import ssl
import threading
import time
import typing
import zlib
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urljoin

import httpcore
import httpx

from hermes.web.addresses import AddressPolicy, BlockedAddress, literal_address
from hermes.web.fetch import FetchError, FetchLimits, Page, content_kind, log
from hermes.web.redaction import redact_url

USER_AGENT = "Mozilla/5.0 (compatible; hermes-agent; +https://github.com/hermes-agent)"
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5"
HEADERS = ((b"User-Agent", USER_AGENT.encode()), (b"Accept", ACCEPT.encode()),
           (b"Accept-Encoding", b"gzip, deflate"), (b"Connection", b"close"))
"""Sent with every request: the encodings ``_decoded`` reads, and ``close`` because the
pool lives for one fetch (the server need not hold the connection open for more)."""
CHUNK = 64 * 1024
WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 47}
"""zlib's window bits per content encoding (47: a zlib or gzip header, detected)."""
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TRANSPORT_ERRORS = (httpcore.NetworkError, httpcore.ProtocolError,
                    httpcore.UnsupportedProtocol, httpcore.ProxyError,
                    httpcore.ConnectionNotAvailable, httpx.InvalidURL)
"""What a request can fail with besides a timeout (httpcore has no common base)."""


class Deadline:
    """The time left of one request."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self, timeout: float | None = None) -> float:
        """Seconds left, at most ``timeout``; raises ``httpcore.ReadTimeout`` at 0."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the request's time is up")
        return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A connection whose every operation ends by the deadline."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline):
        self.stream = stream
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, self.deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, self.deadline.left(timeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        secured = self.stream.start_tls(ssl_context, server_hostname, self.deadline.left(timeout))
        return DeadlineStream(secured, self.deadline)

    def get_extra_info(self, info: str) -> typing.Any:
        return self.stream.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """Connects only to addresses the policy checked, by the deadline."""

    def __init__(self, policy: AddressPolicy, deadline: Deadline,
                 base: httpcore.NetworkBackend | None = None):
        self.policy = policy
        self.deadline = deadline
        self.base = base or httpcore.SyncBackend()
        self.connected: list[str] = []
        """The addresses connected to, in order (tests read it)."""

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[typing.Any] | None = None,
                    ) -> httpcore.NetworkStream:
        failure: Exception | None = None
        for address in self._resolve(host, port):
            try:
                stream = self.base.connect_tcp(address, port, self.deadline.left(timeout),
                                               local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            self.connected.append(address)
            return DeadlineStream(stream, self.deadline)
        raise failure or httpcore.ConnectError(f"{host}: no address to connect to")

    def _resolve(self, host: str, port: int) -> list[str]:
        """``policy.resolve`` by the deadline: a name server that never answers costs
        the request its time, not the caller's thread (the lookup is left to finish)."""
        if literal_address(host) is not None:
            return self.policy.resolve(host, port)
        outcome: list[Any] = []
        done = threading.Event()

        def lookup() -> None:
            try:
                outcome.append(self.policy.resolve(host, port))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append(exc)
            finally:
                done.set()

        threading.Thread(target=lookup, name="web-resolve", daemon=True).start()
        if not done.wait(self.deadline.left()):
            raise httpcore.ConnectTimeout(f"{host}: no DNS answer in time")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        addresses: list[str] = outcome[0]
        return addresses

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[typing.Any] | None = None,
                            ) -> httpcore.NetworkStream:
        raise BlockedAddress("unix sockets are not reachable from the web tools")

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, self.deadline.left()))


def client_ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context (certifi's roots); one per ``Fetcher``."""
    return httpx.create_ssl_context()


def fetch_page(policy: AddressPolicy, limits: FetchLimits, url: str, kinds: Iterable[str],
               context: ssl.SSLContext, network: httpcore.NetworkBackend | None = None) -> Page:
    """``url`` fetched by GET, redirects followed and checked hop by hop, the body read up
    to ``limits.max_bytes``; raises ``BlockedAddress`` or ``FetchError``. ``network``
    replaces the sockets under the guard (tests: a backend that records addresses)."""
    deadline = Deadline(limits.timeout)
    backend = GuardedBackend(policy, deadline, network)
    with httpcore.ConnectionPool(ssl_context=context, network_backend=backend) as pool:
        try:
            return _follow(pool, policy, limits, url, tuple(kinds))
        except httpcore.TimeoutException as exc:
            raise FetchError(f"{redact_url(url)}: no complete answer within web.timeout "
                             f"({limits.timeout:g} s)") from exc
        except TRANSPORT_ERRORS as exc:
            raise FetchError(f"{redact_url(url)}: {_reason(exc)}") from exc


def _follow(pool: httpcore.ConnectionPool, policy: AddressPolicy, limits: FetchLimits,
            url: str, kinds: tuple[str, ...]) -> Page:
    current, cookies = url, RedirectCookies()
    timeout = dict.fromkeys(("connect", "read", "write", "pool"), limits.timeout)
    for hop in range(limits.max_redirects + 1):
        if log.isEnabledFor(logging.INFO):
            log.info("web fetch %s", redact_url(current))
        try:
            policy.check_url(current)
            target = httpx.URL(current)
            with pool.stream("GET", _core_url(target), headers=_headers(target, cookies),
                             extensions={"timeout": timeout}) as response:
                headers = httpx.Headers(response.headers)
                location = headers.get("location")
                if response.status in REDIRECTS and location:
                    cookies.remember(target, response.status, headers)
                    current = urljoin(current, location)
                    continue
                return _read(response, headers, current, limits, kinds)
        except BlockedAddress as exc:
            if hop == 0:
                raise
            raise BlockedAddress(f"{redact_url(url)}: redirected to {exc}") from exc
    raise FetchError(f"{redact_url(url)}: more than web.max_redirects "
                     f"({limits.max_redirects}) redirects")


def _core_url(target: httpx.URL) -> httpcore.URL:
    """httpx's parse of a URL (IDNA host, percent-encoded path) as httpcore takes it."""
    return httpcore.URL(scheme=target.raw_scheme, host=target.raw_host, port=target.port,
                        target=target.raw_path)


def _headers(target: httpx.URL, cookies: RedirectCookies) -> list[tuple[bytes, bytes]]:
    cookie = cookies.header(target)
    return [(b"Host", target.netloc), *HEADERS, *([(b"Cookie", cookie)] if cookie else [])]


class RedirectCookies:
    """The cookies the redirects of one fetch set, sent on to the next hops under the
    cookie rules (domain, path, secure), as httpx's client sends them."""

    def __init__(self) -> None:
        self.jar = httpx.Cookies()

    def remember(self, url: httpx.URL, status: int, headers: httpx.Headers) -> None:
        if "set-cookie" in headers:
            request = httpx.Request("GET", url)
            self.jar.extract_cookies(httpx.Response(status, headers=headers, request=request))

    def header(self, url: httpx.URL) -> bytes | None:
        """The ``Cookie`` header for a request to ``url``, if any cookie applies."""
        if not self.jar:
            return None
        request = httpx.Request("GET", url)
        self.jar.set_cookie_header(request)
        value = request.headers.get("cookie")
        return value.encode("latin-1") if value else None


def _read(response: httpcore.Response, headers: httpx.Headers, url: str,
          limits: FetchLimits, kinds: tuple[str, ...]) -> Page:
    shown = redact_url(url)
    if response.status >= 400:
        raise FetchError(f"{shown}: HTTP {response.status} {_reason_phrase(response)}")
    content_type = headers.get("content-type", "")
    kind = content_kind(content_type)
    if kind not in kinds:
        raise FetchError(f"{shown}: {_unsupported(content_type, kind)}")
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        raise FetchError(_too_big(shown, limits))
    body = b"".join(_capped(_decoded(response, headers, shown), shown, limits))
    return Page(url=url, status=response.status, content_type=content_type,
                kind=kind, body=body, encoding=_charset(content_type))


def _reason_phrase(response: httpcore.Response) -> str:
    phrase = response.extensions.get("reason_phrase")
    if isinstance(phrase, bytes):
        return phrase.decode("ascii", errors="ignore")
    return httpx.codes.get_reason_phrase(response.status)


def _charset(content_type: str) -> str | None:
    """The ``charset`` a ``Content-Type`` names (parsed as httpx parses it), or None."""
    if not content_type:
        return None
    message = email.message.Message()
    message["content-type"] = content_type
    return message.get_content_charset(failobj=None)


def _decoded(response: httpcore.Response, headers: httpx.Headers,
             shown: str) -> Iterator[bytes]:
    """The body decoded chunk by chunk, no chunk inflated past ``CHUNK`` bytes (httpx
    inflates a whole read at once, and stacked encodings multiply: 2 KB of gzip twice is
    256 MiB). One gzip or deflate layer, or none; anything else is refused."""
    names = [name.strip().lower() for name in
             headers.get("content-encoding", "").split(",")]
    names = [name for name in names if name not in ("", "identity")]
    if not names:
        yield from response.iter_stream()
        return
    if len(names) > 1 or names[0] not in WBITS:
        raise FetchError(f"{shown}: content encoding {', '.join(names)} is not read "
                         "(one gzip or deflate layer only)")
    inflater, started = zlib.decompressobj(WBITS[names[0]]), False
    try:
        for raw in response.iter_stream():
            if not started and names[0] == "deflate" and raw[:1] not in (b"\x1f", b"x"):
                inflater = zlib.decompressobj(-15)  # deflate without its zlib header
            started, data = True, raw
            while data and not inflater.eof:
                yield inflater.decompress(data, CHUNK)
                data = inflater.unconsumed_tail
    except zlib.error as exc:
        raise FetchError(f"{shown}: a corrupt {names[0]} body ({exc})") from exc


def _capped(chunks: Iterator[bytes], shown: str, limits: FetchLimits) -> Iterator[bytes]:
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limits.max_bytes:
            raise FetchError(_too_big(shown, limits))
        yield chunk


def _too_big(shown: str, limits: FetchLimits) -> str:
    return f"{shown}: larger than web.max_bytes ({limits.max_bytes} bytes); not read further"


def _unsupported(content_type: str, kind: str) -> str:
    if kind == "pdf":
        return "a PDF (application/pdf): PDF text extraction is not supported"
    return f"unsupported content type {content_type or '(none)'}: HTML, text or JSON only"


def _reason(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"cannot fetch ({text.splitlines()[0][:200]})"
