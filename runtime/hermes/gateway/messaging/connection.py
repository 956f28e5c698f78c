"""Keeping one platform connected: listen, and when the connection is lost, reconnect
with backoff while the outbox holds the replies.

``Connection.run`` listens (the adapter's ``listen`` returns or raises when the
connection is lost); then it marks the platform ``reconnecting`` in ``gateway status``
(why, and when the next attempt is), waits (``Backoff``), calls ``connect`` until it
succeeds and listens again. A server unreachable when the gateway starts is the same
case: ``run`` then begins by connecting. The outbox sends only while connected, so
replies queued meanwhile leave once it is back. ``AccessDenied`` from ``connect`` (a
revoked token) stops it: the platform is ``failed``, and the server is not asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from hermes.gateway.base import PlatformState
from hermes.gateway.messaging.outbox import Backoff, Outbox


class AccessDenied(Exception):
    """The platform refuses us for good (bad or revoked credentials): no retry helps."""


class Connection:
    """The listen-and-reconnect loop of one platform."""

    def __init__(self, name: str, connect: Callable[[], Awaitable[None]],
                 listen: Callable[[], Awaitable[None]], outbox: Outbox, status: PlatformState,
                 log: logging.Logger, backoff: Backoff | None = None):
        self.name = name
        self.connect = connect
        self.listen = listen
        self.outbox = outbox
        self.status = status
        self.log = log
        self.backoff = backoff or Backoff()
        self._lost = asyncio.Event()
        outbox.on_lost = self._lost.set

    async def run(self, down: str | None = None) -> None:
        """Listen, reconnecting whenever the connection is lost (cancel the task to stop).
        The caller made the first connection, or it failed for the reason ``down``: then
        it is made here first, with backoff."""
        detail = self.status.detail  # what the adapter showed once connected
        reason = down
        while True:
            if reason is not None:
                shown = await self._reconnect(reason, detail, first=down is not None)
                if shown is None:
                    return
                detail, down = shown, None
            self._up(detail)
            reason = await self._listen_until_lost()
            self.outbox.connected.clear()
            self.log.warning("connection lost", extra={"fields": {"platform": self.name,
                                                                  "error": reason}})

    def _up(self, detail: str) -> None:
        self.status.state, self.status.detail, self.status.retry_at = "running", detail, None
        self._lost.clear()
        self.outbox.connected.set()

    async def _listen_until_lost(self) -> str:
        listening = asyncio.ensure_future(self.listen())
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({listening, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (listening, lost):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await listening
        if listening.done() and not listening.cancelled() and listening.exception():
            return describe(listening.exception())
        return "sending failed" if lost.done() else "the listener ended"

    async def _reconnect(self, reason: str, detail: str, *, first: bool) -> str | None:
        """Connect with backoff; the detail to show once connected, None when the platform
        refuses us for good."""
        attempt = 0
        while True:
            delay = self.backoff.delay(attempt)
            self.status.state, self.status.detail = "reconnecting", reason
            self.status.retry_at = time.time() + delay
            await asyncio.sleep(delay)
            try:
                await self.connect()
            except AccessDenied as exc:
                self.status.state, self.status.detail = "failed", str(exc)
                self.status.retry_at = None
                self.log.error("platform refused the connection", extra={"fields": {
                    "platform": self.name, "error": str(exc)}})
                return None
            except Exception as exc:  # noqa: BLE001 - any failure: try again later
                reason = describe(exc)
                attempt += 1
                continue
            self.log.info("connected" if first else "reconnected", extra={"fields": {
                "platform": self.name, "attempts": attempt + 1}})
            # connect() shows where it is connected; one that does not keeps the old detail
            return self.status.detail if self.status.detail != reason else detail


def describe(exc: BaseException | None) -> str:
    """An exception as one line for ``gateway status`` and the log."""
    return f"{type(exc).__name__}: {exc}" if exc is not None else "unknown"
