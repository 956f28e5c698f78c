"""The names an HTTP listener of ours answers to: the ``Host`` and ``Origin`` rules that
keep web pages out of a server on this machine (the API server, the dashboard).

- ``Host``: DNS rebinding points a name the attacker owns at 127.0.0.1, so the browser
  sends ``Host: evil.example`` to the loopback server and reads the answers. Allowed: the
  bound address; the loopback names (``localhost``, ``127.0.0.1``, ``[::1]``) when bound
  to loopback or to a wildcard address; any IP literal when bound to a wildcard address (an
  address is no name, so nothing rebinds it); the names added with ``allow`` (``*``:
  any). The port is not compared: a port mapping or a proxy changes it, and rebinding
  cannot turn the attacker's name into an allowed one.
- ``Origin``: browsers name the page's origin on cross-origin requests and on every
  POST; any origin but the server's own (``http(s)://`` + the ``Host`` it was reached
  by) is foreign, ``null`` included.

Plain functions of strings: no web framework is imported.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
WILDCARDS = frozenset({"0.0.0.0", "[::]"})
LABEL_DOMAIN = ".localhost"
"""A dashboard on loopback is opened at ``<secret label>.localhost`` (RFC 6761: browsers
resolve it to loopback), so its cookie goes to no other server on this machine."""


@dataclass
class HostRule:
    """The ``Host`` names one listener answers to (lower case, IPv6 in brackets)."""

    names: set[str] = field(default_factory=set)
    any_ip: bool = False
    any_name: bool = False

    @property
    def on_loopback(self) -> bool:
        """Whether the loopback names reach it (bound to loopback or a wildcard)."""
        return "localhost" in self.names

    def label_of(self, header: str) -> str | None:
        """The label of a ``Host`` header ``<label>.localhost[:port]`` when the listener
        is reached on loopback; None otherwise. (The caller checks the label.)"""
        name = host_name(header)
        if not self.on_loopback or name is None or not name.endswith(LABEL_DOMAIN):
            return None
        label = name.removesuffix(LABEL_DOMAIN)
        return label if label.isalnum() else None

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


def is_own_origin(origin: str, host: str) -> bool:
    """Whether an ``Origin`` header is ``http(s)://<host>``, ``host`` being the request's
    ``Host`` header."""
    text = origin.strip().lower()
    for scheme in ("https://", "http://"):
        if text.startswith(scheme):
            return text.removeprefix(scheme) == host.strip().lower()
    return False


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
    """Whether a bind address (or ``localhost``) is on the loopback interface only."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
