"""Slow and greedy clients at the connection level: deadlines for a request's header and
body, and a cap on the connections of one client address.

uvicorn (its h11 protocol, subclassed here) bounds neither how long a request's header
may take nor how many connections one address holds, and a body's deadline in the app
restarts with every byte. So, per connection:

- the header must be whole within ``header_timeout`` of the connection's start, or of
  the first byte of the next request on a kept-alive connection (an idle kept-alive
  connection is uvicorn's ``timeout_keep_alive``);
- the body must be whole within ``read_timeout`` of the header's end. The app reading a
  body answers 408 at that moment itself (``body``); this deadline, a second later, also
  closes connections whose body nobody reads (a refusal sent before it);
- an address holding ``max_client_connections`` connections has the next one answered
  503 and closed at once.

A deadline is never renewed within its phase; a passed one is answered 408 (when no
answer has started) and the connection closed.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from hermes.gateway.api_server.wire import WireError

BODY_GRACE = 1.0
"""Seconds the connection's body deadline waits past the app's own, so the app answers."""


@dataclass
class ConnectionLimits:
    """The deadlines and the per-address cap of one listener (the strictest of the
    platforms it serves)."""

    header_timeout: float
    body_timeout: float
    per_client: int

    @classmethod
    def of(cls, settings: Any) -> ConnectionLimits:
        """From a platform's ``ListenerSettings``."""
        return cls(settings.header_timeout, settings.read_timeout,
                   settings.max_client_connections)

    def tighten(self, other: ConnectionLimits) -> None:
        self.header_timeout = min(self.header_timeout, other.header_timeout)
        self.body_timeout = min(self.body_timeout, other.body_timeout)
        self.per_client = min(self.per_client, other.per_client)


def answer(error: WireError) -> bytes:
    """``error`` as a whole HTTP/1.1 response that closes the connection."""
    body = json.dumps(error.body()).encode()
    return (f"HTTP/1.1 {error.status} {_REASONS.get(error.status, '')}\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


_REASONS = {408: "Request Timeout", 503: "Service Unavailable"}


def limited_protocol(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class under ``limits``, counting one listener's connections."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    counts: dict[str, int] = {}

    class LimitedProtocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _phase = ""
        _address: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else ""
            if counts.get(address, 0) >= limits.per_client:
                transport.write(answer(_too_many(limits.per_client)))
                transport.close()
                return
            counts[address] = counts.get(address, 0) + 1
            self._address = address
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._enter("")
            if self._address is not None:
                left = counts.pop(self._address) - 1
                if left:
                    counts[self._address] = left
                self._address = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def _watch(self) -> None:
            """Start, keep or stop the deadline of the phase the request is in."""
            state = self.conn.their_state
            if self.transport.is_closing():
                self._enter("")
            elif state is h11.IDLE:  # between requests: uvicorn's keep-alive timer, if set
                self._enter("" if self.timeout_keep_alive_task is not None else "header")
            else:
                self._enter("body" if state is h11.SEND_BODY else "")

        def _enter(self, phase: str) -> None:
            if phase == self._phase:
                return
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._phase = phase
            if phase:
                seconds = limits.header_timeout if phase == "header" else \
                    limits.body_timeout + BODY_GRACE
                self._deadline = self.loop.call_later(seconds, self._expired)

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            unanswered = self.cycle is None or not self.cycle.response_started
            if self._phase == "header" or unanswered:  # a new request has no answer yet
                self.transport.write(answer(_too_slow(self._phase, limits)))
            self.transport.close()

    return LimitedProtocol


def _too_many(cap: int) -> WireError:
    return WireError(503, f"too many open connections from this address (settings."
                          f"max_client_connections: {cap}); close some and retry",
                     "server_unavailable", code="too_many_connections")


def _too_slow(phase: str, limits: ConnectionLimits) -> WireError:
    if phase == "header":
        return WireError(408, f"the request header did not arrive whole within "
                              f"{limits.header_timeout:g} s (settings.header_timeout)",
                         code="request_timeout")
    return WireError(408, f"the request body did not arrive whole within "
                          f"{limits.body_timeout:g} s (settings.read_timeout)",
                     code="request_timeout")
