"""Replies of one platform, delivered in order under its rate limit, never lost to a hiccup.

``Outbox.put`` queues a reply and returns; one worker delivers the queue in order,
no faster than ``per_second``. What the adapter's ``deliver`` raises decides what
happens to the reply at the head of the queue:

- ``RetryAfter``: the platform's rate limit (a 429): wait as long as it says, send again;
- ``Disconnected``: the connection is lost: the reply waits until ``connected`` is set
  again (the ``Connection`` re-makes it);
- ``Rejected``: the platform refused this reply for good: it is dropped and logged;
- anything else: retried with exponential backoff, dropped after ``max_attempts``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hermes.gateway.base import MessageSource
from hermes.voice.base import Audio

Reply = str | Audio
"""Text, or a spoken reply (sent by the adapter's ``deliver_voice``)."""
Deliver = Callable[[MessageSource, Reply], Awaitable[None]]
MAX_RETRY_AFTER = 300.0
"""A longer ``retry_after`` than this is taken as this (a broken or hostile server)."""


class SendError(Exception):
    """A reply could not be delivered (raised by an adapter's ``deliver``)."""


class RetryAfter(SendError):
    """The platform's rate limit: send again after ``seconds``."""

    def __init__(self, seconds: float, message: str = ""):
        super().__init__(message or f"rate limited: retry after {seconds:g} s")
        self.seconds = seconds


class Disconnected(SendError):
    """The connection is lost; the reply waits for the reconnect."""


class Rejected(SendError):
    """The platform refused this reply for good (e.g. the chat is gone)."""


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: ``initial * factor**attempt``, capped at ``maximum``."""

    initial: float = 1.0
    factor: float = 2.0
    maximum: float = 60.0

    def delay(self, attempt: int) -> float:
        base = min(self.maximum, self.initial * self.factor ** max(attempt, 0))
        return base * random.uniform(0.8, 1.0)  # noqa: S311 - jitter, not secrecy


class Outbox:
    """The queue of replies of one platform and the worker that delivers it."""

    def __init__(self, name: str, deliver: Deliver, log: logging.Logger, *,
                 per_second: float = 1.0, backoff: Backoff | None = None,
                 max_attempts: int = 5, on_lost: Callable[[], None] = lambda: None):
        self.name = name
        self.deliver = deliver
        self.log = log
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.backoff = backoff or Backoff()
        self.max_attempts = max_attempts
        self.on_lost = on_lost
        self.connected = asyncio.Event()
        """Set while the platform is connected; the worker sends only then."""
        self._queue: deque[tuple[MessageSource, Reply]] = deque()
        self._queued = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._last_sent = float("-inf")

    @property
    def pending(self) -> int:
        """Replies not delivered yet (the one being sent included)."""
        return len(self._queue)

    def put(self, source: MessageSource, text: Reply) -> None:
        self._queue.append((source, text))
        self._idle.clear()
        self._queued.set()

    async def run(self) -> None:
        """Deliver forever (cancel the task to stop)."""
        while True:
            if not self._queue:
                self._idle.set()
                self._queued.clear()
                await self._queued.wait()
                continue
            await self._deliver_head()

    async def drain(self, timeout: float) -> int:
        """Wait up to ``timeout`` s for the queue to empty; how many replies are left."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
        return len(self._queue)

    async def _deliver_head(self) -> None:
        source, text = self._queue[0]
        attempt = 0
        while True:
            await self.connected.wait()
            await self._pace()
            try:
                await self.deliver(source, text)
            except RetryAfter as exc:
                self._note("rate limited", source, retry_after=exc.seconds)
                await asyncio.sleep(min(max(exc.seconds, 0.0), MAX_RETRY_AFTER))
                continue
            except Disconnected as exc:
                self._note("connection lost while sending", source, error=str(exc))
                self.connected.clear()
                self.on_lost()
                continue
            except Rejected as exc:
                self._note("reply rejected", source, error=str(exc), level=logging.ERROR)
            except Exception as exc:  # noqa: BLE001 - retried, then dropped with a log line
                attempt += 1
                if attempt < self.max_attempts:
                    self._note("send failed; retrying", source, error=str(exc))
                    await asyncio.sleep(self.backoff.delay(attempt - 1))
                    continue
                self._note("reply dropped", source, error=str(exc), level=logging.ERROR)
            break
        self._queue.popleft()

    async def _pace(self) -> None:
        wait = self._last_sent + self.interval - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last_sent = time.monotonic()

    def _note(self, event: str, source: MessageSource, level: int = logging.WARNING,
              **fields: object) -> None:
        self.log.log(level, event, extra={"fields": {"platform": self.name,
                                                     "chat": source.chat_id, **fields}})
