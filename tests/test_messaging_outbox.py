"""The outbox, the connection loop and the adapter base in one event loop, with a scripted
``deliver``: order, the rate limit, RetryAfter, holding replies while disconnected,
dropping rejected ones, retrying errors, reconnecting with backoff, and a message the
gateway fails on."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace

from hermes.config.schema import PlatformConfig
from hermes.gateway.base import MessageEvent, MessageSource, PlatformState
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.connection import AccessDenied, Connection
from hermes.gateway.messaging.outbox import (
    Backoff,
    Disconnected,
    Outbox,
    Rejected,
    RetryAfter,
)

CHAT = MessageSource("chat", "1")
FAST = Backoff(initial=0.01, factor=2, maximum=0.05)
LOG = logging.getLogger("test-outbox")


class Platform:
    """A deliver function that fails as scripted and records what got through."""

    def __init__(self, failures: list[Exception | None] | None = None):
        self.failures = list(failures or [])
        self.delivered: list[tuple[str, float]] = []
        self.attempts = 0

    async def deliver(self, source: MessageSource, text: str) -> None:
        self.attempts += 1
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            raise failure
        self.delivered.append((text, time.monotonic()))


async def until(condition: Callable[[], object], timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())


def outbox_for(platform: Platform, **options: object) -> Outbox:
    box = Outbox("chat", platform.deliver, LOG, backoff=FAST, **options)  # type: ignore[arg-type]
    box.connected.set()
    return box


def test_replies_leave_in_order_under_the_rate_limit() -> None:
    async def scenario() -> None:
        platform = Platform()
        box = outbox_for(platform, per_second=10)
        worker = asyncio.create_task(box.run())
        for n in range(4):
            box.put(CHAT, f"part {n}")
        assert await box.drain(5) == 0
        worker.cancel()
        assert [text for text, _ in platform.delivered] == [f"part {n}" for n in range(4)]
        times = [at for _, at in platform.delivered]
        assert all(b - a >= 0.095 for a, b in zip(times, times[1:], strict=False))
    run(scenario)


def test_retry_after_is_waited_out_then_the_same_reply_is_sent() -> None:
    async def scenario() -> None:
        platform = Platform([RetryAfter(0.3)])
        box = outbox_for(platform, per_second=1000)
        worker = asyncio.create_task(box.run())
        started = time.monotonic()
        box.put(CHAT, "hello")
        box.put(CHAT, "second")
        assert await box.drain(5) == 0
        worker.cancel()
        assert [t for t, _ in platform.delivered] == ["hello", "second"]
        assert platform.delivered[0][1] - started >= 0.3 and platform.attempts == 3
    run(scenario)


def test_rejected_replies_are_dropped_and_errors_retried_then_dropped() -> None:
    async def scenario() -> None:
        boom = RuntimeError("boom")
        platform = Platform([Rejected("chat gone"), boom, None, boom, boom, boom])
        box = outbox_for(platform, per_second=1000, max_attempts=3)
        worker = asyncio.create_task(box.run())
        for text in ("rejected", "retried", "dropped", "last"):
            box.put(CHAT, text)
        assert await box.drain(5) == 0
        worker.cancel()
        assert [t for t, _ in platform.delivered] == ["retried", "last"]
    run(scenario)


def test_a_lost_connection_holds_replies_until_it_is_back() -> None:
    async def scenario() -> None:
        platform = Platform([Disconnected("connection reset")])
        status = PlatformState("running", "chat at test")
        box = Outbox("chat", platform.deliver, LOG, per_second=1000, backoff=FAST)
        connects: list[float] = []
        listening = asyncio.Event()

        async def connect() -> None:
            connects.append(time.monotonic())
            if len(connects) < 3:  # the server is still down twice
                raise ConnectionRefusedError("refused")

        async def listen() -> None:
            listening.set()
            await asyncio.Event().wait()  # until cancelled or the outbox says it is lost

        connection = Connection("chat", connect, listen, box, status, LOG, FAST)
        loop = asyncio.create_task(connection.run())
        worker = asyncio.create_task(box.run())
        await until(listening.is_set)
        box.put(CHAT, "kept")
        await until(lambda: platform.delivered)
        assert [t for t, _ in platform.delivered] == ["kept"] and len(connects) == 3
        assert status.state == "running" and status.detail == "chat at test"
        loop.cancel()
        worker.cancel()
    run(scenario)


def test_access_denied_on_reconnect_fails_the_platform() -> None:
    async def scenario() -> None:
        status = PlatformState("running")
        box = Outbox("chat", Platform().deliver, LOG)

        async def connect() -> None:
            raise AccessDenied("token revoked")

        async def listen() -> None:
            raise ConnectionResetError("gone")

        await asyncio.wait_for(Connection("chat", connect, listen, box, status, LOG,
                                          FAST).run(), 5)
        assert (status.state, status.detail) == ("failed", "token revoked")
        assert not box.connected.is_set()
    run(scenario)


class OneShotPlatform(MessagingAdapter):
    """A chat platform whose listener hands over the queued events once."""

    def __init__(self, events: list[MessageEvent]):
        config = PlatformConfig(kind="telegram", token="t", settings={"send_rate": 1000})
        super().__init__("chat", config, SimpleNamespace(log=LOG), None)
        self.events = events
        self.connects = 0

    async def connect(self) -> None:
        self.connects += 1

    async def listen(self) -> None:
        while self.events:
            await self.dispatch(self.events.pop(0))
        await asyncio.Event().wait()

    async def deliver(self, source: MessageSource, text: str) -> None:
        pass


def test_a_message_the_gateway_fails_on_does_not_drop_the_connection() -> None:
    async def scenario() -> None:
        handled: list[str] = []

        async def handler(event: MessageEvent) -> None:
            if event.text == "bad":
                raise RuntimeError("a bug in handling")
            handled.append(event.text)

        platform = OneShotPlatform([MessageEvent(CHAT, "bad"), MessageEvent(CHAT, "good")])
        await platform.start(handler)
        await until(lambda: handled)
        assert handled == ["good"] and platform.connects == 1
        assert platform.status.state == "running"
        await platform.stop()
        await platform.close()
    run(scenario)


class FlakyStartPlatform(MessagingAdapter):
    """A chat platform whose server refuses the first ``down`` connections (``error``)."""

    backoff = FAST

    def __init__(self, down: int, error: Exception):
        config = PlatformConfig(kind="telegram", token="t", settings={"send_rate": 1000})
        super().__init__("chat", config, SimpleNamespace(log=LOG), None)
        self.down = down
        self.error = error
        self.connects = 0
        self.delivered: list[str] = []

    async def connect(self) -> None:
        self.connects += 1
        if self.connects <= self.down:
            raise self.error
        self.status.detail = "chat at test"

    async def listen(self) -> None:
        await asyncio.Event().wait()

    async def deliver(self, source: MessageSource, text: str) -> None:
        self.delivered.append(text)


async def _ignore(event: MessageEvent) -> None:
    pass


def test_a_server_down_at_start_is_retried_with_backoff_and_replies_wait() -> None:
    async def scenario() -> None:
        platform = FlakyStartPlatform(3, ConnectionRefusedError("refused"))
        platform.backoff = Backoff(initial=0.2, factor=2, maximum=0.2)
        before = time.time()
        await platform.start(_ignore)  # returns: the platform retries in the background
        status = platform.status
        assert (status.state, status.detail) == ("reconnecting",
                                                 "ConnectionRefusedError: refused")
        await until(lambda: status.retry_at)  # the connection's task tells when
        assert status.retry_at is not None and before < status.retry_at <= time.time() + 0.2
        await platform.send(CHAT, "queued while down")
        await until(lambda: platform.delivered)
        assert platform.delivered == ["queued while down"] and platform.connects == 4
        assert (status.state, status.detail, status.retry_at) == ("running", "chat at test",
                                                                  None)
        await platform.stop()
        await platform.close()
    run(scenario)


def test_refused_credentials_at_start_fail_without_another_attempt() -> None:
    async def scenario() -> None:
        platform = FlakyStartPlatform(1, AccessDenied("token rejected"))
        try:
            await platform.start(_ignore)
        except AccessDenied as exc:
            assert str(exc) == "token rejected"
        else:
            raise AssertionError("start() must fail")
        assert platform.connects == 1 and platform._tasks == []
    run(scenario)
