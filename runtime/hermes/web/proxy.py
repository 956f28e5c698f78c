"""The browser's address guard: a forward proxy on loopback that every request of the
browser goes through (``--proxy-server``, loopback included), checked by the same
``AddressPolicy`` as ``web_extract``.

For each request (plain ``GET http://...`` or ``CONNECT host:port`` for https, wss and
ws) the proxy resolves the host itself, refuses it with a 403 naming the reason if any
address is not allowed, and otherwise connects to an address it checked, never to the
name: a DNS answer cannot change between the check and the connection. Only the browser
it was started for can use it: it listens on 127.0.0.1 on a free port and wants the
per-launch credentials (``Proxy-Authorization: Basic``) that Playwright answers the
407 challenge with.

Bodies stream both ways (one upstream connection per client connection), with time
limits on the request head, the connection and idleness, and a bound on connections.
Refusals are kept for the browser tools (``take_refusals``) so that a page that "failed
to load" can say what was blocked.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
import re
import secrets
import threading
from collections import deque
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024
"""Longest request head (request line and headers) the proxy reads."""
HOP_HEADERS = frozenset({"proxy-authorization", "proxy-connection", "connection",
                         "keep-alive"})
"""Headers of the hop to the proxy, never forwarded upstream."""
REALM = "hermes-browser"
CLIENT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""A proxy user name: it tells one browser context's refusals from another's."""
CHUNK = 64 * 1024


class Policy(Protocol):
    """What the proxy needs of ``hermes.web.addresses.AddressPolicy``."""

    def resolve(self, host: str, port: int) -> list[str]: ...


@dataclass(frozen=True)
class Refusal:
    """One request the proxy refused: its target (secrets redacted), why, and the
    client (the proxy user name its browser context logged in with)."""

    target: str
    reason: str
    client: str = ""

    def __str__(self) -> str:
        return f"blocked: {self.reason}"


@dataclass(frozen=True)
class Limits:
    """Time and size bounds of the proxy."""

    head_timeout: float = 30.0
    """Seconds a client has to send a whole request head."""
    connect_timeout: float = 15.0
    """Seconds to open the upstream connection."""
    idle_timeout: float = 300.0
    """Seconds a connection may pass no bytes either way before it is closed."""
    max_connections: int = 128
    """Client connections served at once; more wait for a free slot."""


class Refused(Exception):
    """A target the policy (or the proxy) will not connect to; ``str`` is the reason."""


class Request:
    """A parsed request head: method, target, version and the raw header lines."""

    def __init__(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ValueError(f"not an HTTP/1 request line: {lines[0][:80]!r}")
        self.method, self.target, self.version = parts
        self.headers = [tuple(part.strip() for part in line.split(":", 1))
                        for line in lines[1:] if ":" in line]

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key.lower() == name), None)

    def upstream_head(self, path: str) -> bytes:
        """The head sent to the origin: origin-form target, hop headers dropped, one
        request per connection."""
        kept = [f"{key}: {value}" for key, value in self.headers
                if key.lower() not in HOP_HEADERS]
        lines = [f"{self.method} {path} {self.version}", *kept, "Connection: close"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _response(status: str, body: str, *extra: str) -> bytes:
    data = body.encode()
    head = [f"HTTP/1.1 {status}", "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(data)}", "Connection: close", "Cache-Control: no-store",
            *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def _redact(url: str) -> str:
    try:
        from hermes.web.redaction import redact_url
    except ImportError:  # pragma: no cover — the web package always ships it
        return url.split("?", 1)[0]
    return redact_url(url)


def _host_port(authority: str, default: int) -> tuple[str, int]:
    """``host:port`` of a CONNECT target or a URL's authority (``[v6]:port`` too)."""
    parts = urlsplit(f"//{authority}")
    try:
        port = parts.port or default
    except ValueError as exc:
        raise Refused(f"{authority[:120]}: not a host and port ([v6]:port for IPv6)") from exc
    host = parts.hostname or ""
    if not host:
        raise Refused(f"{authority[:120]}: names no host")
    return host, port


class GuardProxy:
    """A running guard proxy: ``url`` for ``--proxy-server``, ``username``/``password``
    for Playwright, ``take_refusals()`` for the tools, ``close()`` at the end."""

    def __init__(self, policy: Policy, limits: Limits, loop: asyncio.AbstractEventLoop,
                 server: asyncio.base_events.Server, thread: threading.Thread,
                 username: str, password: str) -> None:
        self.policy = policy
        self.limits = limits
        self.username = username
        self.password = password
        self._loop = loop
        self._server = server
        self._thread = thread
        port = server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._refusals: deque[Refusal] = deque(maxlen=200)
        self._lock = threading.Lock()

    @property
    def server(self) -> str:
        return self.url

    def take_refusals(self, client: str | None = None) -> list[Refusal]:
        """The refusals since the last call, oldest first, and forget them; with
        ``client``, only that client's (one browser context's: see ``playwright_proxy``)."""
        with self._lock:
            taken = [r for r in self._refusals if client in (None, r.client)]
            kept = [r for r in self._refusals if client not in (None, r.client)]
            self._refusals.clear()
            self._refusals.extend(kept)
        return taken

    def refuse(self, target: str, reason: str, client: str = "") -> None:
        log.info("browser guard refused %s: %s", target, reason)
        with self._lock:
            self._refusals.append(Refusal(target, reason, client))

    def close(self) -> None:
        """Stop listening, drop open connections, end the thread (idempotent)."""
        if self._loop.is_closed() or not self._thread.is_alive():
            return
        with contextlib.suppress(RuntimeError):
            future = asyncio.run_coroutine_threadsafe(_shutdown(self._server), self._loop)
            with contextlib.suppress(Exception):
                future.result(timeout=5)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> GuardProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


async def _shutdown(server: asyncio.base_events.Server) -> None:
    """Stop listening, cancel every connection's task and let each finish its cleanup
    (closing its sockets) before the loop stops: a task left pending would close its
    writer only when collected, on a closed loop."""
    server.close()
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=3)


def start_guard_proxy(policy: Policy, limits: Limits | None = None) -> GuardProxy:
    """Start the proxy on 127.0.0.1 (a free port) in a thread with its own event loop."""
    limits = limits or Limits()
    username, password = "hermes", secrets.token_urlsafe(24)
    loop = asyncio.new_event_loop()
    started: list[GuardProxy] = []
    slots = asyncio.Semaphore(limits.max_connections)

    def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> asyncio.Task:
        return loop.create_task(_serve(started[0], slots, reader, writer))

    server = loop.run_until_complete(
        asyncio.start_server(handle, "127.0.0.1", 0, limit=HEAD_LIMIT, backlog=256))
    thread = threading.Thread(target=_run_forever, args=(loop,), name="hermes-browser-guard",
                              daemon=True)
    started.append(GuardProxy(policy, limits, loop, server, thread, username, password))
    thread.start()
    return started[0]


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


async def _serve(guard: GuardProxy, slots: asyncio.Semaphore,
                 reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    async with slots:
        try:
            await _handle(guard, reader, writer)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


async def _handle(guard: GuardProxy, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), guard.limits.head_timeout)
    try:
        request = Request(head[:-4])
    except ValueError:
        writer.write(_response("400 Bad Request", "not an HTTP/1 proxy request\n"))
        return
    client = _client(request.header("proxy-authorization"), guard.password)
    if client is None:
        writer.write(_response("407 Proxy Authentication Required", "proxy credentials "
                               "required\n", f'Proxy-Authenticate: Basic realm="{REALM}"'))
        return
    try:
        host, port, first = _target(request)
        upstream = await _connect(guard, host, port)
    except Refused as exc:
        guard.refuse(_redact(request.target[:300]), str(exc), client)
        writer.write(_response("403 Forbidden", f"blocked: {exc}\n"))
        return
    up_reader, up_writer = upstream
    try:
        if first is None:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        else:
            up_writer.write(first)
        await _pipe_both(reader, writer, up_reader, up_writer, guard.limits.idle_timeout)
    finally:
        up_writer.close()


def _client(authorization: str | None, password: str) -> str | None:
    """The client name of valid ``Basic`` credentials (any name, the launch's password),
    else None."""
    scheme, _, token = (authorization or "").partition(" ")
    try:
        user, _, given = base64.b64decode(token.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    if scheme.lower() != "basic" or not CLIENT_NAME.fullmatch(user):
        return None
    return user if hmac.compare_digest(given.encode(), password.encode()) else None


def _target(request: Request) -> tuple[str, int, bytes | None]:
    """(host, port, head to send upstream or None for a tunnel)."""
    if request.method == "CONNECT":
        host, port = _host_port(request.target, 443)
        return host, port, None
    parts = urlsplit(request.target)
    if parts.scheme.lower() != "http" or not parts.netloc:
        raise Refused(f"{parts.scheme or 'no'} scheme: only http:// requests and CONNECT "
                      "tunnels pass the browser's proxy")
    host, port = _host_port(parts.netloc.rpartition("@")[2], 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return host, port, request.upstream_head(path)


async def _connect(guard: GuardProxy, host: str, port: int
                   ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the first reachable address the policy returned for ``host``."""
    from hermes.errors import UserError

    try:
        addresses = await asyncio.to_thread(guard.policy.resolve, host, port)
    except UserError as exc:
        raise Refused(str(exc)) from exc
    failure: Exception | None = None
    for address in addresses:
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port, limit=CHUNK),
                                          guard.limits.connect_timeout)
        except (OSError, TimeoutError) as exc:
            failure = exc
    raise Refused(f"{host}:{port}: cannot connect ({failure or 'no address'})")


async def _pipe_both(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter,
                     idle: float) -> None:
    """Copy bytes both ways until the origin's side ends, the client's breaks, or
    nothing moves either way for ``idle`` seconds."""
    activity = asyncio.Event()
    tasks = [asyncio.create_task(_copy(reader, up_writer, activity)),
             asyncio.create_task(_copy(up_reader, writer, activity))]
    try:
        # until the origin's side ends, or the client's breaks (a reset, not an EOF)
        while not tasks[1].done() and not (tasks[0].done() and tasks[0].exception()):
            activity.clear()
            waiter = asyncio.create_task(activity.wait())
            pending = [task for task in tasks if not task.done()]
            done, _ = await asyncio.wait([*pending, waiter], timeout=idle,
                                         return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if not done:
                break
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                activity: asyncio.Event) -> None:
    while data := await source.read(CHUNK):
        sink.write(data)
        await sink.drain()
        activity.set()
    if sink.can_write_eof():
        with contextlib.suppress(OSError):
            sink.write_eof()


def chromium_args(guard: GuardProxy) -> list[str]:
    """Command-line switches that send everything Chromium fetches through ``guard``
    and close the paths that would go around a proxy."""
    return [
        f"--proxy-server={guard.url}",
        # Chromium sends loopback directly unless told otherwise: the gateway lives there.
        "--proxy-bypass-list=<-loopback>",
        # WebRTC would send UDP (STUN/TURN, peers) past any HTTP proxy.
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        # HTTP/3 and WebTransport are UDP: never through an HTTP proxy.
        "--disable-quic",
        # Names are the proxy's to resolve: whatever would still connect directly
        # (a DNS prefetch, a STUN server by name) finds no address.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        # No DNS prefetching or preconnects of their own, no background services
        # (component updates, safe browsing) talking to the network.
        "--dns-prefetch-disable",
        "--disable-background-networking",
        "--disable-features=NetworkPrediction,MediaRouter,DialMediaRouteProvider",
    ]


def playwright_proxy(guard: GuardProxy, client: str | None = None) -> dict[str, str]:
    """Playwright's ``proxy=`` setting for a browser or a context behind ``guard``; a
    context given its own ``client`` name (letters, digits, ``_.-``, up to 64) finds its
    refusals with ``guard.take_refusals(client)``."""
    if client is not None and not CLIENT_NAME.fullmatch(client):
        raise ValueError(f"proxy client name {client!r}: letters, digits, _.- only (1-64)")
    return {"server": guard.url, "bypass": "<-loopback>",
            "username": client or guard.username, "password": guard.password}

