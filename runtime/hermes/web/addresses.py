"""Which addresses the web tools may reach: public ones only, unless ``web.allow_private``
names them.

A URL passes ``check_url`` (http or https, no tricks in its authority) and then every
address its host resolves to passes ``resolve``: a name with one private address among
public ones is refused whole, so that no later choice between them can land on the
private one. The fetcher connects to an address ``resolve`` returned, never to the name,
so nothing can rebind it between the check and the connection.

Refused: loopback, private (RFC 1918, ULA ``fc00::/7``), link-local, multicast,
unspecified, reserved and shared (CGNAT ``100.64/10``) addresses, the same addresses
inside IPv4-mapped, IPv4-compatible, 6to4, Teredo and NAT64 IPv6 forms, and cloud
metadata services by name or address. IPv4 written the old ways (``2130706433``,
``0x7f.1``, ``0177.0.0.1``) is judged as the address it means.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import SplitResult, urlsplit

from hermes.errors import UserError
from hermes.web.redaction import redact_url

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]
"""``(host, port) -> addresses``: what a name resolves to (injectable for tests)."""

SCHEMES = ("http", "https")
METADATA_NAMES = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "metadata.azure.internal", "metadata.tencentyun.com",
    "metadata.platformequinix.com", "metadata.packet.net",
})
"""Host names of cloud instance-metadata services."""
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200",
    "192.0.0.192", "169.254.169.123",
))
"""Addresses of cloud instance-metadata services (AWS, ECS, Alibaba, Oracle...)."""
SHARED = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}\.?$", re.I)
"""A host written as a dotted or undotted decimal, octal or hex IPv4 address."""
BAD_AUTHORITY = re.compile(r"[\\\s\x00-\x1f\x7f]")


class BlockedAddress(UserError):
    """A URL or address the web tools must not reach; one line naming the host and
    the reason."""


class UnresolvedHost(BlockedAddress):
    """A host name that resolves to no address (refused like a blocked one)."""


@dataclass(frozen=True)
class AllowEntry:
    """One ``web.allow_private`` entry: a host name or a network, with an optional port."""

    name: str | None
    network: Network | None
    port: int | None

    def admits_name(self, host: str, port: int) -> bool:
        return self.name == host and self.port in (None, port)

    def admits(self, address: IPAddress, port: int) -> bool:
        return (self.network is not None and address in self.network
                and self.port in (None, port))


def parse_allow_entry(text: str) -> AllowEntry:
    """``host``, ``IP``, ``CIDR``, each with an optional ``:port``; IPv6 with a port as
    ``[v6]:port``. Raises ``ValueError`` naming the entry."""
    entry, port = _split_port(text.strip())
    if not entry:
        raise ValueError(f"{text!r} names no host")
    try:
        return AllowEntry(None, ipaddress.ip_network(entry, strict=False), port)
    except ValueError:
        pass
    if "/" in entry or ":" in entry or not re.fullmatch(r"[A-Za-z0-9._-]+", entry):
        raise ValueError(f"{text!r} is no host name, IP address or CIDR network")
    legacy = legacy_ipv4(entry)
    if legacy is not None:
        return AllowEntry(None, ipaddress.ip_network(legacy), port)
    return AllowEntry(normal_host(entry), None, port)


def _split_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, _port(rest[1:], text) if rest.startswith(":") else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, _port(port, text)
    return text, None


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{entry!r} has no valid port after ':'")
    return int(text)


def normal_host(host: str) -> str:
    """A host name compared the way DNS does: lower case, no trailing dot."""
    return host.lower().rstrip(".")


def legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a decimal/octal/hex host means (``0x7f.1`` -> 127.0.0.1), as
    the C resolver and browsers read it; None for a host that is not one."""
    if not LEGACY_IPV4.match(host):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host.rstrip(".")))
    except OSError:
        return None


def literal_address(host: str) -> IPAddress | None:
    """The address a host literally is (``[::1]``, ``127.1``, ``2130706433``), or None
    for a name."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        return legacy_ipv4(bare)


def why_blocked(address: IPAddress) -> str | None:
    """Why the web tools must not reach ``address`` (None: it is public)."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = why_blocked(embedded)
        return f"{reason} inside an IPv6 address" if reason else None
    checks: tuple[tuple[bool, str], ...] = (
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_unspecified, "the unspecified address"),
        (address.version == 4 and address in SHARED, "a shared (carrier-grade NAT) address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "not a public address"),
    )
    return next((reason for failed, reason in checks if failed), None)


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, Teredo, NAT64)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in net for net in NAT64) or int(address) >> 32 == 0 and int(address) > 1:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to for a TCP connection, in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnresolvedHost(f"{host}: cannot be resolved ({exc})") from exc
    return list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))


@dataclass(frozen=True)
class AddressPolicy:
    """Public addresses only, plus what ``allow_private`` names (``host``, ``IP`` or
    ``CIDR``, each with an optional ``:port``; ``[v6]:port``)."""

    allow_private: Sequence[str] = ()
    resolver: Resolver = field(default=system_resolver, compare=False, repr=False)
    """How names are resolved; tests inject one (a rebinding DNS answer, say)."""
    entries: tuple[AllowEntry, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        entries = tuple(parse_allow_entry(str(text)) for text in self.allow_private)
        object.__setattr__(self, "entries", entries)
        object.__setattr__(self, "allow_private", tuple(self.allow_private))

    @classmethod
    def from_config(cls, web: Any) -> AddressPolicy:
        """The policy of a ``web`` config section (a dataclass, mapping or None)."""
        allowed = config_option(web, "allow_private") or ()
        try:
            return cls(tuple(allowed))
        except ValueError as exc:
            raise BlockedAddress(f"web.allow_private: {exc} — write host, IP or CIDR, "
                                 "optionally with :port ([v6]:port for IPv6)") from exc

    def check_url(self, url: str) -> SplitResult:
        """``url`` split, if it is an http(s) URL whose authority says plainly which host
        it means; the host's addresses are checked by ``resolve``."""
        try:
            parts = urlsplit(url.strip())
            parts.port  # noqa: B018 — raises on a bad port
        except ValueError as exc:
            raise BlockedAddress(f"{_short(url)}: not a valid URL ({exc})") from exc
        if parts.scheme.lower() not in SCHEMES:
            shown = parts.scheme or "no scheme"
            raise BlockedAddress(f"{_short(url)}: {shown}: URLs are refused — only http "
                                 "and https")
        if BAD_AUTHORITY.search(parts.netloc) or parts.netloc.count("@") > 1:
            raise BlockedAddress(f"{_short(url)}: the host part is ambiguous (backslash, "
                                 "space or several '@')")
        if not parts.hostname:
            raise BlockedAddress(f"{_short(url)}: names no host")
        self.check_name(parts.hostname, default_port(parts))
        return parts

    def check_name(self, host: str, port: int) -> None:
        """Refuse a host by its name alone (metadata services, ``localhost``) or, for
        an address literal, by the address."""
        name = normal_host(host)
        if any(entry.admits_name(name, port) for entry in self.entries):
            return
        address = literal_address(name)
        if address is not None:
            self._check_address(host, address, port)
        elif name in METADATA_NAMES:
            raise BlockedAddress(f"{host}: a cloud metadata service — refused unless "
                                 "web.allow_private names it")
        elif name == "localhost" or name.endswith(".localhost"):
            raise BlockedAddress(f"{host}: a loopback name — refused unless web.allow_private "
                                 "names it")

    def resolve(self, host: str, port: int) -> list[str]:
        """Every address ``host`` resolves to, each checked; raises ``BlockedAddress``
        if any is refused (so no choice among them can reach a refused one)."""
        self.check_name(host, port)
        name = normal_host(host)
        literal = literal_address(name)
        if literal is not None:
            return [str(literal)]
        addresses = self.resolver(name, port)
        if not addresses:
            raise UnresolvedHost(f"{host}: resolves to no address")
        name_allowed = any(entry.admits_name(name, port) for entry in self.entries)
        for text in addresses:
            if not name_allowed:
                self._check_address(host, ipaddress.ip_address(text), port)
        return addresses

    def _check_address(self, host: str, address: IPAddress, port: int) -> None:
        reason = why_blocked(address)
        if reason is None or any(entry.admits(address, port) for entry in self.entries):
            return
        where = f"[{host}]" if ":" in host and not host.startswith("[") else host
        shown = f"{where}:{port}"
        if normal_host(host).strip("[]") != str(address):
            shown += f" ({address})"
        raise BlockedAddress(f"{shown}: {reason} — refused unless "
                             "web.allow_private names it")


def default_port(parts: SplitResult) -> int:
    """The port a split http(s) URL connects to."""
    return parts.port or (443 if parts.scheme.lower() == "https" else 80)


def config_option(section: Any, key: str, default: Any = None) -> Any:
    """``section.key`` of a config section given as a model, a mapping or None;
    ``default`` when the section has no such key (an explicit null stays None)."""
    if section is None:
        return default
    if isinstance(section, dict):
        return section.get(key, default)
    return getattr(section, key, default)


def _short(url: str) -> str:
    text = redact_url(url)
    return text if len(text) <= 120 else text[:117] + "..."
