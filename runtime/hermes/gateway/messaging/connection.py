"""Keeping one platform connected: listen, and when the connection is lost, reconnect
with backoff while the outbox holds the replies.

``Connection.run`` listens (the adapter's ``listen`` returns or raises when the
connection is lost); then it marks the platform ``reconnecting`` in ``gateway status``,
waits (``Backoff``), calls ``connect`` until it succeeds and listens again. The outbox
sends only while connected, so replies queued meanwhile leave once it is back.
``AccessDenied`` from ``connect`` (a revoked token) stops it: the platform is ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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

    async def run(self) -> None:
        """Listen, reconnecting whenever the connection is lost (cancel the task to stop);
        the first connection is made by the caller."""
        detail = self.status.detail  # what the adapter showed once connected
        while True:
            self._up(detail)
            reason = await self._listen_until_lost()
            self.outbox.connected.clear()
            self.log.warning("connection lost", extra={"fields": {"platform": self.name,
                                                                  "error": reason}})
            if not await self._reconnect(reason):
                return

    def _up(self, detail: str) -> None:
        self.status.state, self.status.detail = "running", detail
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
            return _describe(listening.exception())
        return "sending failed" if lost.done() else "the listener ended"

    async def _reconnect(self, reason: str) -> bool:
        """Connect again with backoff; False when the platform refuses us for good."""
        attempt = 0
        while True:
            self.status.state, self.status.detail = "reconnecting", reason
            await asyncio.sleep(self.backoff.delay(attempt))
            try:
                await self.connect()
            except AccessDenied as exc:
                self.status.state, self.status.detail = "failed", str(exc)
                self.log.error("platform refused the connection", extra={"fields": {
                    "platform": self.name, "error": str(exc)}})
                return False
            except Exception as exc:  # noqa: BLE001 - any failure: try again later
                reason = _describe(exc)
                attempt += 1
                continue
            self.log.info("reconnected", extra={"fields": {"platform": self.name,
                                                           "attempts": attempt + 1}})
            return True


def _describe(exc: BaseException | None) -> str:
    return f"{type(exc).__name__}: {exc}" if exc is not None else "unknown"
