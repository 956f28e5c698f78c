"""Every request to the dashboard passes ``Guard`` before any page runs:

1. ``Host`` must be a name of this listener and an ``Origin``, when sent, the page's own
   (``hermes.http_names``, as the API server checks them): DNS rebinding and other web
   pages are refused with 403.
2. ``GET ...?token=T`` (the URL ``hermes dashboard`` prints, as Jupyter's) opens a browser
   session: a cookie (HttpOnly, SameSite=Strict) and a redirect to the same URL without
   the token, so it stays out of the history and of ``Referer``. On loopback the cookie
   is set only on the token's secret host name ``<label>.localhost`` (``tokens``): a
   login at ``127.0.0.1``/``localhost``/``[::1]`` is redirected there with its token,
   since a cookie of those names would reach every server on the machine whatever its
   port; with ``dashboard.cookie_host: loopback`` (a browser that does not resolve
   ``*.localhost``) it is set there anyway, at that risk. A name of
   ``dashboard.allowed_hosts`` (or the address bound beyond loopback) is the user's own
   public name and logs in on itself.
3. Every other request needs that session cookie or ``Authorization: Bearer T``: 401
   without either, and nothing of a profile is sent.
4. A state-changing request (POST, PUT, PATCH, DELETE) of a browser session carries the
   session's anti-CSRF token: the ``X-CSRF-Token`` header (htmx sends it, from
   ``hx-headers`` in ``base.html``) or, in a url-encoded form, the ``csrf_token`` field.
   Bearer requests need none: a browser never adds that header by itself.

The session and its ``Access`` are put in ``scope["state"]`` (``request.state``) for the
pages. A pure ASGI middleware: response bodies pass through untouched, so a page may
stream (server-sent events) later.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from hermes.dashboard.tokens import Access, Tokens, label_of
from hermes.http_names import LABEL_DOMAIN, LOOPBACK_NAMES, HostRule, host_name, is_own_origin

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
MAX_FORM_BYTES = 1_000_000
"""A url-encoded form read to find its ``csrf_token``; larger bodies must use the header."""
MAX_SESSIONS = 1000
LABEL_HOST_HELP = ("A browser that cannot open its <label>.localhost address (older Safari) "
                   "needs dashboard.cookie_host: loopback, at a risk the README's Dashboard "
                   "section states.")
SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; "
                                 b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer makes a form POST say Origin: null
    (b"x-frame-options", b"DENY"),
)
"""On every answer: nothing but the dashboard's own files runs or loads, no page may
frame it, and no URL leaves in a ``Referer``."""


@dataclass
class Session:
    """One browser's login: its cookie value, anti-CSRF token and access."""

    id: str
    access: Access
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    opened: float = field(default_factory=time.time)


class Sessions:
    """The browser sessions of one dashboard, in memory (a restart logs everyone out;
    the printed URL logs in again)."""

    def __init__(self) -> None:
        self._by_id: dict[str, Session] = {}

    def open(self, access: Access) -> Session:
        if len(self._by_id) >= MAX_SESSIONS:  # the oldest goes first
            self._by_id.pop(next(iter(self._by_id)))
        session = Session(secrets.token_urlsafe(32), access)
        self._by_id[session.id] = session
        return session

    def get(self, session_id: str) -> Session | None:
        return self._by_id.get(session_id)

    def close(self, session_id: str) -> None:
        self._by_id.pop(session_id, None)


@dataclass
class Guard:
    """The ASGI middleware of the module docstring, around the dashboard's app."""

    app: App
    hosts: HostRule
    tokens: Tokens
    sessions: Sessions
    profiles: Callable[[], list[str]]
    """The root's profile names now (a profile's token opens only an existing one)."""
    cookie: str
    label_hosts: bool = True
    """A login at a loopback name goes on to the token's ``<label>.localhost``
    (``dashboard.cookie_host: label``); False: it sets the cookie where it is."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        send = _with_security_headers(send)
        headers = _headers(scope)
        foreign = self._foreign(headers)
        if foreign is not None:
            return await refuse(scope, send, 403, foreign)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query and scope.get("method") in ("GET", "HEAD"):
            return await self._log_in(scope, query, send)
        session, access = self._authenticated(headers)
        if access is None:
            return await refuse(scope, send, 401, self._needs_token(headers))
        if session is not None and scope.get("method") in UNSAFE_METHODS:
            receive, ok = await _csrf_checked(scope, headers, receive, session.csrf)
            if not ok:
                return await answer(send, 403, "Missing or wrong anti-CSRF token: reload "
                                    "the page and try again.")
        scope.setdefault("state", {}).update(session=session, access=access)
        await _answering_errors(self.app, scope, receive, send)

    def _needs_token(self, headers: dict[str, str]) -> str:
        """The 401's line; at a loopback name (where someone whose browser does not open
        the printed ``<label>.localhost`` URL may try instead) it names the way out."""
        text = "This dashboard needs its token: open the URL `hermes dashboard` printed."
        if self.label_hosts and self.hosts.on_loopback and \
                host_name(headers.get("host", "")) in LOOPBACK_NAMES:
            text += " " + LABEL_HOST_HELP
        return text

    def _foreign(self, headers: dict[str, str]) -> str | None:
        host = headers.get("host", "")
        if not self.hosts.allows(host) and not self._is_label_host(host):
            return (f"Host: {host[:100]!r} is not a name of this dashboard; if you reach it "
                    "so, add the name to dashboard.allowed_hosts")
        origin = headers.get("origin")
        if origin is not None and not is_own_origin(origin, host):
            return f"Origin: {origin[:100]!r} is not this dashboard's own; refused"
        return None

    def _is_label_host(self, host: str) -> bool:
        label = self.hosts.label_of(host)
        return label is not None and label in self.tokens.labels(self.profiles())

    def _authenticated(self, headers: dict[str, str]) -> tuple[Session | None, Access | None]:
        session = self.sessions.get(_cookies(headers).get(self.cookie, ""))
        if session is not None:
            return session, session.access
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return None, self.tokens.access(token.strip(), self.profiles())
        return None, None

    async def _log_in(self, scope: Scope, query: dict[str, str], send: Send) -> None:
        token = query.pop("token")
        access = self.tokens.access(token, self.profiles())
        if access is None:
            return await answer(send, 401, "This token is not (or no longer) this "
                                "dashboard's: open the URL `hermes dashboard` printed last.")
        host = _headers(scope).get("host", "")
        if self.label_hosts and self.hosts.on_loopback and host_name(host) in LOOPBACK_NAMES:
            return await self._to_label_host(scope, host, query, token, send)
        session = self.sessions.open(access)
        secure = "; Secure" if scope.get("scheme") in ("https", "wss") else ""
        cookie = f"{self.cookie}={session.id}; Path=/; HttpOnly; SameSite=Strict{secure}"
        target = scope.get("root_path", "") + scope["path"]
        if query:
            target += "?" + urlencode(query)
        await answer(send, 303, "", [("location", target), ("set-cookie", cookie)])

    async def _to_label_host(self, scope: Scope, host: str, query: dict[str, str],
                             token: str, send: Send) -> None:
        """303 to the same URL, token kept, on the token's ``<label>.localhost`` (the
        port of ``host`` kept: a port mapping or SSH forward may have changed it)."""
        _, colon, port = host.rpartition(":") if not host.endswith("]") else ("", "", "")
        authority = label_of(token) + LABEL_DOMAIN + (colon + port if port.isdigit() else "")
        scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
        target = (f"{scheme}://{authority}{scope.get('root_path', '')}{scope['path']}?"
                  + urlencode({**query, "token": token}))
        await answer(send, 303, "", [("location", target)])


async def refuse(scope: Scope, send: Send, status: int, text: str) -> None:
    """Refuse an HTTP request with ``status`` and ``text``, a WebSocket with a close."""
    if scope["type"] == "websocket":
        return await send({"type": "websocket.close", "code": 1008})
    await answer(send, status, text)


async def answer(send: Send, status: int, text: str,
                 headers: Sequence[tuple[str, str]] = ()) -> None:
    """A plain-text response that names nothing of any profile."""
    body = (text + "\n").encode() if text else b""
    raw = [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"),
           (b"content-length", str(len(body)).encode())]
    raw += [(name.encode(), value.encode("latin-1")) for name, value in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _csrf_checked(scope: Scope, headers: dict[str, str], receive: Receive,
                        expected: str) -> tuple[Receive, bool]:
    """Whether the request carries ``expected``, and the ``receive`` the app reads the
    body from (replayed when a form had to be read here)."""
    if _same(headers.get(CSRF_HEADER, ""), expected):
        return receive, True
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        return receive, False
    body = await _read_body(receive)
    if body is None:
        return receive, False
    fields = dict(parse_qsl(body.decode("latin-1")))
    return _replay(body, receive), _same(fields.get(CSRF_FIELD, ""), expected)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole body, or None past ``MAX_FORM_BYTES``."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES or message["type"] != "http.request":
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _answering_errors(app: App, scope: Scope, receive: Receive, send: Send) -> None:
    """``app``, and a page's unexpected error answered here (with the security headers)
    rather than by Starlette's outermost error middleware, which sends without them; the
    error goes on to be logged."""
    started = False

    async def sending(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, sending)
    except Exception:
        if scope["type"] == "http" and not started:
            await answer(send, 500, "Internal error: the dashboard's log names it.")
        raise


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
        await send(message)

    return sending


def _same(presented: str, expected: str) -> bool:
    return bool(presented) and hmac.compare_digest(presented.encode(), expected.encode())


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", ())}


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    pairs = (part.strip().partition("=") for part in headers.get("cookie", "").split(";"))
    return {name: value for name, _, value in pairs if name}
