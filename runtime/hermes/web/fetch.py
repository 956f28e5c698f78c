"""A guarded HTTP GET for every web tool: only addresses the ``AddressPolicy`` admits,
each redirect hop checked, the whole request within ``web.timeout``, the body read up to
``web.max_bytes`` and no further, URLs redacted in every log line and message.

httpx is imported when the first page is fetched (``hermes.web.connect``), never when a
tool is registered.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hermes.errors import ToolError
from hermes.web.addresses import AddressPolicy, config_option
from hermes.web.redaction import redact_url

__all__ = ["FetchError", "FetchLimits", "Fetcher", "Page", "content_kind", "redact_url"]

log = logging.getLogger("hermes.web")

TEXT_KINDS = ("html", "text", "json")
"""What ``web_extract`` reads; anything else is refused before its body is read."""


class FetchError(ToolError):
    """A page that could not be fetched: one line naming the (redacted) URL and why."""


@dataclass(frozen=True)
class FetchLimits:
    """Bounds of one request (``web.timeout``, ``web.max_bytes``, ``web.max_redirects``)."""

    timeout: float = 20.0
    """Seconds for the whole request: connecting, every redirect and the body."""
    max_bytes: int = 5_000_000
    """Bytes of body read at most (after decompression); a larger page is refused."""
    max_redirects: int = 5
    """Redirects followed at most."""

    @classmethod
    def from_config(cls, web: Any) -> FetchLimits:
        """The limits of a ``web`` config section (missing keys keep the defaults)."""
        values = {key: config_option(web, key) for key in ("timeout", "max_bytes", "max_redirects")}
        return cls(**{key: value for key, value in values.items() if value is not None})


@dataclass(frozen=True)
class Page:
    """A fetched response: the final URL (after redirects) and its body."""

    url: str
    status: int
    content_type: str
    kind: str
    """``html``, ``text``, ``json``, ``pdf``, ``image`` or ``other`` (``content_kind``)."""
    body: bytes = field(repr=False)
    encoding: str | None = None
    """The charset the response declared, if any."""

    def text(self) -> str:
        """The body decoded (declared charset, else UTF-8), bad bytes replaced."""
        try:
            return self.body.decode(self.encoding or "utf-8", "replace")
        except LookupError:
            return self.body.decode("utf-8", "replace")


def content_kind(content_type: str) -> str:
    """What a ``Content-Type`` holds: ``html``, ``text``, ``json``, ``pdf``, ``image`` or
    ``other``; a missing type is taken as HTML (servers omit it for pages)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in ("", "text/html", "application/xhtml+xml"):
        return "html"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    if media == "application/pdf":
        return "pdf"
    if media.startswith("image/"):
        return "image"
    if media.startswith("text/") or media in ("application/xml",) or media.endswith("+xml"):
        return "text"
    return "other"


class Fetcher:
    """GETs pages under one policy and one set of limits (one per runtime)."""

    def __init__(self, policy: AddressPolicy, limits: FetchLimits, network: Any = None):
        self.policy = policy
        self.limits = limits
        self.network = network
        """An ``httpcore.NetworkBackend`` in place of real sockets, under the address
        guard (tests); None: the system's."""
        self._context: ssl.SSLContext | None = None

    @classmethod
    def from_config(cls, web: Any) -> Fetcher:
        return cls(AddressPolicy.from_config(web), FetchLimits.from_config(web))

    def fetch(self, url: str, kinds: Iterable[str] = TEXT_KINDS) -> Page:
        """``url``'s response if it is one of ``kinds``; raises ``BlockedAddress`` (a
        refused address or scheme) or ``FetchError`` (timeout, too big, HTTP error...)."""
        from hermes.web.connect import client_ssl_context, fetch_page

        self.policy.check_url(url)
        if self._context is None:
            self._context = client_ssl_context()
        return fetch_page(self.policy, self.limits, url, kinds, self._context, self.network)

