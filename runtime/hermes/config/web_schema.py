"""The ``web`` config group: the search backend and the limits of every web request.

One option per backend under ``conf/web/`` (``ddgs`` is the default: no key needed);
``hermes config set web brave`` switches. The web tools (``hermes.web``) read these
values; nothing here imports them.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from hermes.config.learning_schema import _seconds
from hermes.config.plugins_schema import _builtin_or_plugin
from hermes.config.sections import NonBlank, Section

WEB_BACKENDS: tuple[str, ...] = ("ddgs", "searxng", "brave", "tavily", "exa", "firecrawl",
                                 "none")
"""Built-in search backends (the YAML files under ``conf/web/``)."""

WebBackend = Annotated[str, AfterValidator(_builtin_or_plugin(*WEB_BACKENDS))]
"""``web.backend``: a built-in backend, or ``plugin:NAME`` (a plugin's
``register_web_search_provider``, checked when the plugins load)."""

_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?"
                   r"(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?")
_ALLOW_HELP = ("'{value}' is no host, IP address or CIDR range (with an optional :PORT), "
               "e.g. 127.0.0.1:8080, 10.0.0.0/8, [fd00::1]:443 or intranet.example")


def split_port(entry: str) -> tuple[str, int | None]:
    """``host:port`` → ``(host, port)``; ``[v6]:port`` and bare IPv6 are understood."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else None
        if rest and port is None:
            raise ValueError(entry)
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
    else:
        host, port = entry, None
    if port is None:
        return host, None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(entry)
    return host, int(port)


def _allow_entry(value: str) -> str:
    """A ``web.allow_private`` entry: host name, IP address or CIDR, optional ``:PORT``."""
    try:
        host, _ = split_port(value.strip())
        if "/" in host or host.replace(".", "").isdigit() or ":" in host:
            ipaddress.ip_network(host, strict=False)
        elif not _HOST.fullmatch(host):
            raise ValueError(value)
    except ValueError:
        raise PydanticCustomError("as_written", _ALLOW_HELP, {"value": value}) from None
    return value.strip()


def _http_url(value: str) -> str:
    if not re.match(r"https?://[^/\s]+", value):
        raise PydanticCustomError("as_written", "'{value}' is no http(s) URL, e.g. "
                                  "http://localhost:8888", {"value": value})
    return value.rstrip("/")


PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")


def _proxy_url(value: str) -> str:
    """``SCHEME://[USER:PASSWORD@]HOST:PORT`` with a scheme the ddgs client speaks."""
    try:
        parts = urlsplit(value.strip())
        good = (parts.scheme in PROXY_SCHEMES and bool(parts.hostname) and bool(parts.port)
                and parts.path in ("", "/") and not parts.query)
    except ValueError:
        good = False
    if not good:
        raise PydanticCustomError("as_written", "'{value}' is no proxy URL: SCHEME://HOST:PORT "
                                  "with SCHEME one of " + ", ".join(PROXY_SCHEMES) + ", e.g. "
                                  "socks5h://127.0.0.1:9150 (Tor)",
                                  {"value": re.sub(r"//[^@/]*@", "//***@", value)})
    return value.strip()


AllowEntry = Annotated[str, AfterValidator(_allow_entry)]
ProxyUrl = Annotated[str, AfterValidator(_proxy_url)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]
CacheTtl = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]
"""Seconds; YAML may write ``1h``, ``90m``, ``1d``; ``0`` turns the cache off."""


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("as_written", "expected a number, got {value}",
                                  {"value": str(value).lower()})
    return value


class WebConfig(Section):
    """Web search and page fetching (``web_search``, ``web_extract``)."""

    name: NonBlank
    """The option's name (the YAML file under ``conf/web/``)."""
    backend: WebBackend
    """The search backend: ``ddgs`` (DuckDuckGo and others through the ``ddgs`` package,
    no key), ``searxng`` (a SearXNG instance at ``base_url``), ``brave``, ``tavily``,
    ``exa``, ``firecrawl`` (each with ``api_key``), ``none`` (no ``web_search``), or a
    plugin's ``plugin:NAME``."""
    api_key: str | None = None
    """The backend's key, by reference to the home's ``.env``:
    ``${secret:BRAVE_API_KEY}``; unset for ``ddgs`` and ``searxng``."""
    base_url: HttpUrl | None = None
    """The backend's address: required for ``searxng`` (e.g. ``http://localhost:8888``);
    for the others it replaces the service's own (a proxy or a test server)."""
    proxy: ProxyUrl | None = None
    """The proxy the ``ddgs`` backend's requests go through: ``http://``, ``https://``,
    ``socks5://`` or ``socks5h://HOST:PORT`` (Tor: ``socks5h://127.0.0.1:9150``);
    unset: ddgs's own ``DDGS_PROXY``, else none. The other backends do not use it."""
    max_results: Annotated[int, BeforeValidator(_no_bool)] = Field(5, gt=0, le=20)
    """Results ``web_search`` returns when the model asks for no number (at most 20)."""
    max_chars: Annotated[int, BeforeValidator(_no_bool)] = Field(40_000, gt=0)
    """Cap of one page's text from ``web_extract`` (``full=true`` included)."""
    summarize_over: int | None = Field(12_000, gt=0)
    """Pages longer than this many characters are condensed by ``model``; the original
    stays in the session for ``web_extract(..., full=true)``; null: never condensed."""
    model: str | None = None
    """The model that condenses long pages, at the main provider; unset: the main model."""
    allow_private: list[AllowEntry] = Field(default_factory=list)
    """Private, loopback or link-local addresses the web tools may reach anyway: host
    names, IP addresses or CIDR ranges, each with an optional ``:PORT``
    (``[127.0.0.1:8080, 10.0.0.0/8]``). Everything else private is refused."""
    cache_ttl: CacheTtl = 3600.0
    """How long fetched pages and search results are reused (cached in the home, per
    profile): ``1h``, ``10m``, ``1d``; ``0``: no cache."""
    timeout: Annotated[float, BeforeValidator(_no_bool)] = Field(20.0, gt=0)
    """Seconds one web request may take."""
    max_bytes: Annotated[int, BeforeValidator(_no_bool)] = Field(5_000_000, gt=0)
    """Largest response body read, in bytes; a larger page is cut there."""
    max_redirects: Annotated[int, BeforeValidator(_no_bool)] = Field(5, ge=0)
    """Redirects followed per request (each hop's address is checked)."""
