"""The API's front door, checked before a byte of a body is read: the ``Host`` must name this
server, an ``Origin`` must be the server's own, and a POST body must be JSON.

The ``Host`` and ``Origin`` rules (``hermes.http_names``, shared with the dashboard) keep
web pages in the user's own browser from reaching the API (DNS rebinding, cross-origin
requests). ``Content-Type``: a cross-origin request a page may send without asking first
(no CORS preflight) carries text/plain, form or multipart bodies only; a POST to a route
that takes a body must be ``application/json``, which needs the preflight this server
never grants.

Webhooks are signed, so only the ``Origin`` rule applies to them (``foreign_origin``).
"""

from __future__ import annotations

from hermes.gateway.api_server.body import App, Receive, Scope, Send, refuse
from hermes.gateway.api_server.wire import WireError
from hermes.http_names import HostRule, is_loopback, is_own_origin

__all__ = ["HostRule", "foreign_origin", "guard_requests", "is_loopback", "refusal"]
SETTING = "settings.allowed_hosts of the api_server platform"


def guard_requests(app: App, rule: HostRule, json_paths: frozenset[str]) -> App:
    """``app`` behind the three rules (JSON bodies for POSTs to ``json_paths``); a refused
    request is answered and its connection closed."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            error = refusal(scope, rule, json_paths)
            if error is not None:
                return await refuse(error, send)
        return await app(scope, receive, send)

    return guarded


def refusal(scope: Scope, rule: HostRule, json_paths: frozenset[str]) -> WireError | None:
    """Why the request may not reach the API, or None."""
    headers = _wanted(scope)
    host = headers.get(b"host", b"").decode("latin-1")
    if not rule.allows(host):
        return WireError(403, f"Host: {host[:100]!r} is not a name of this server; if clients "
                              f"reach it so, add the name to {SETTING}",
                         "permission_error", code="host_not_allowed")
    error = foreign_origin(headers.get(b"origin"), host)
    if error is None and scope["method"] == "POST" and scope["path"] in json_paths:
        return _not_json(headers.get(b"content-type", b""))
    return error


def foreign_origin(origin: bytes | None, host: str) -> WireError | None:
    """A 403 when an ``Origin`` is present and is not ``http(s)://<host>``."""
    if origin is None:
        return None
    text = origin.decode("latin-1").strip().lower()
    if is_own_origin(text, host):
        return None
    return WireError(403, f"Origin: {text[:100]!r} is not this server's own; requests from "
                          "other web pages are refused", "permission_error",
                     code="origin_not_allowed")


def _not_json(content_type: bytes) -> WireError | None:
    media = content_type.split(b";", 1)[0].strip().lower()
    if media == b"application/json":
        return None
    shown = content_type.decode("latin-1")[:100] or "(none)"
    return WireError(415, f"Content-Type: {shown}; send the body as application/json",
                     code="unsupported_media_type")


def _wanted(scope: Scope) -> dict[bytes, bytes]:
    return {name: value for name, value in scope.get("headers", ())
            if name in (b"host", b"origin", b"content-type")}
