"""The API's front door, checked before a byte of a body is read: the ``Host`` must name this
server, an ``Origin`` must be the server's own, and a POST body must be JSON.

Each rule closes a way for a web page to reach the API from the user's own browser:

- ``Host``: DNS rebinding points a name the attacker owns at 127.0.0.1, so the browser
  sends ``Host: evil.example`` to the loopback server and reads the answers. Allowed: the
  bound address; the loopback names (``localhost``, ``127.0.0.1``, ``[::1]``) when bound
  to loopback or to a wildcard address; any IP literal when bound to a wildcard address (an
  address is no name, so nothing rebinds it); the names in ``allowed_hosts`` (``*``:
  any). The port is not compared: a port mapping or a proxy changes it, and rebinding
  cannot turn the attacker's name into an allowed one.
- ``Origin``: browsers name the page's origin on cross-origin requests and on every
  POST; any origin but the server's own (``http(s)://`` + the ``Host`` it was reached
  by) is refused, ``null`` included.
- ``Content-Type``: a cross-origin request a page may send without asking first (no CORS
  preflight) carries text/plain, form or multipart bodies only; a POST to a route that
  takes a body must be ``application/json``, which needs the preflight this server
  never grants.

Webhooks are signed, so only the ``Origin`` rule applies to them (``foreign_origin``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from hermes.gateway.api_server.body import App, Receive, Scope, Send, refuse
from hermes.gateway.api_server.wire import WireError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
WILDCARDS = frozenset({"0.0.0.0", "[::]"})
SETTING = "settings.allowed_hosts of the api_server platform"


@dataclass
class HostRule:
    """The ``Host`` names one listener answers to (lower case, IPv6 in brackets)."""

    names: set[str] = field(default_factory=set)
    any_ip: bool = False
    any_name: bool = False

    @classmethod
    def for_address(cls, host: str) -> HostRule:
        bound = _normal(host)
        rule = cls({bound}, any_ip=bound in WILDCARDS)
        if rule.any_ip or is_loopback(host):
            rule.names |= LOOPBACK_NAMES
        return rule

    def allow(self, names: Iterable[str]) -> None:
        """Answer to ``names`` too (``*``: to any name)."""
        for name in names:
            if name.strip() == "*":
                self.any_name = True
            else:
                self.names.add(_normal(name))

    def allows(self, header: str) -> bool:
        name = host_name(header)
        if name is None:
            return False
        return self.any_name or name in self.names or (self.any_ip and _is_ip(name))


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
    own = text.removeprefix("https://") if text.startswith("https://") else \
        text.removeprefix("http://") if text.startswith("http://") else None
    if own is not None and own == host.strip().lower():
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


def host_name(header: str) -> str | None:
    """The name of a ``Host`` header (lower case, port dropped, IPv6 in brackets); None
    when it is not a host name at all."""
    value = header.strip().lower().rstrip(".")
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1:]
        if end < 0 or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return value[:end + 1]
    name, _, port = value.partition(":")
    if not name or (port and not port.isdigit()) or ":" in port:
        return None
    return name.rstrip(".")


def _normal(host: str) -> str:
    value = host.strip().lower().rstrip(".")
    if ":" in value and not value.startswith("["):  # a bare IPv6 address, as in settings.host
        return f"[{value}]"
    return value


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
