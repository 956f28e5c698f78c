"""``MessagingAdapter``: the base class of chat platforms.

A subclass writes four methods: ``connect`` (make the connection; raise
``AccessDenied`` for bad credentials), ``listen`` (hand each message to
``self.on_message`` until the connection is lost), ``deliver`` (send one part of a
reply; raise ``RetryAfter``, ``Disconnected`` or ``Rejected`` as they apply) and
optionally ``typing`` and ``disconnect``. The base gives it the rest: replies split
at ``max_chars`` and queued in an ``Outbox``, a ``Connection`` that reconnects with
backoff (from the start, when the server cannot be reached then), and the status
``hermes gateway status`` shows. The gateway puts the platform's ``Gate`` (allowlist and
pairing) in front of ``on_message``.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from typing import Any

from hermes.config.platform_schema import MessagingSettings
from hermes.config.schema import PlatformConfig
from hermes.gateway.base import MessageHandler, MessageSource, PlatformAdapter, PlatformState
from hermes.gateway.messaging.connection import AccessDenied, Connection, describe
from hermes.gateway.messaging.outbox import Backoff, Outbox, Rejected, Reply
from hermes.gateway.messaging.text import split_text
from hermes.voice.base import Audio

CLOSE_WAIT = 10.0
"""Seconds ``close`` waits for queued replies to leave."""


class MessagingAdapter(PlatformAdapter):
    """One chat platform of one profile."""

    max_chars = 4096
    """Longest message the platform takes; longer replies are split."""
    backoff = Backoff()
    """Between reconnection attempts and failed sends."""
    voice_format: str | None = None
    """How its voice messages are encoded (``hermes.voice.audio.FORMATS``, e.g.
    ``ogg-opus``); None: the platform sends none (``deliver_voice`` is not written)."""

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        self.name = name
        self.config = config
        self.service = service
        self.log = service.log
        self.status = PlatformState()
        settings = config.settings
        assert isinstance(settings, MessagingSettings)  # the schema types it by ``kind``
        self.outbox = Outbox(name, self._deliver_reply, self.log, per_second=settings.send_rate,
                             backoff=self.backoff)
        self.connection = Connection(name, self.connect, self.listen, self.outbox,
                                     self.status, self.log, self.backoff)
        self.on_message: MessageHandler | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, on_message: MessageHandler) -> None:
        """Connect, then listen and send. Refused credentials (``AccessDenied``) fail the
        start: no retry helps. A server that cannot be reached is tried again with
        backoff (``reconnecting``) while the gateway serves; replies wait for it."""
        self.on_message = on_message
        down: str | None = None
        try:
            await self.connect()
        except AccessDenied:
            raise
        except Exception as exc:  # noqa: BLE001 - unreachable for now: retried
            down = describe(exc)
            self.status.state, self.status.detail = "reconnecting", down
            self.log.warning("platform unreachable at start; retrying with backoff", extra={
                "fields": {"platform": self.name, "error": down}})
        else:
            self.status.state = "running"
            self.outbox.connected.set()
        self._tasks = [asyncio.create_task(self.connection.run(down)),
                       asyncio.create_task(self.outbox.run())]

    async def stop(self) -> None:
        """Stop listening; replies still queued or to come are sent by ``close``."""
        self.status.state = "stopping"
        await _cancel(self._tasks[:1])

    async def close(self) -> None:
        left = await self.outbox.drain(CLOSE_WAIT) if self.outbox.connected.is_set() else \
            self.outbox.pending
        if left:
            self.log.warning("replies not delivered at shutdown", extra={"fields": {
                "platform": self.name, "replies": left}})
        await _cancel(self._tasks)
        await self.disconnect()
        self.status.state = "stopped"

    async def send(self, source: MessageSource, text: str) -> None:
        """Queue ``text`` (split to fit) for ``source``'s chat; returns at once."""
        for part in self.split(text):
            self.outbox.put(source, part)

    async def send_voice(self, source: MessageSource, sound: Audio) -> None:
        """Queue a spoken reply (in ``voice_format``) after what is queued; returns at once."""
        self.outbox.put(source, sound)

    def split(self, text: str) -> list[str]:
        return split_text(text, self.max_chars)

    async def deliver_voice(self, source: MessageSource, sound: Audio) -> None:
        """Send one voice message; raise as ``deliver`` does (platforms with a
        ``voice_format`` write it)."""
        raise Rejected(f"{self.name} sends no voice messages")

    async def _deliver_reply(self, source: MessageSource, reply: Reply) -> None:
        if isinstance(reply, Audio):
            await self.deliver_voice(source, reply)
        else:
            await self.deliver(source, reply)

    @abstractmethod
    async def connect(self) -> None:
        """Make the connection; ``AccessDenied`` when the platform refuses us for good."""

    @abstractmethod
    async def listen(self) -> None:
        """Hand messages to ``self.on_message`` until the connection is lost (return or
        raise then); cancelled to stop."""

    @abstractmethod
    async def deliver(self, source: MessageSource, text: str) -> None:
        """Send one part; raise ``RetryAfter``, ``Disconnected`` or ``Rejected``."""

    async def disconnect(self) -> None:
        """Let go of the connection (close clients, sessions)."""

    async def dispatch(self, event: Any) -> None:
        """Hand one ``MessageEvent`` to the gateway (a listener calls this). A message the
        gateway fails on is logged (without its text) and skipped: it must not look like a
        lost connection, nor stop the messages after it."""
        assert self.on_message is not None, "start() sets the handler"
        try:
            await self.on_message(event)
        except Exception as exc:  # noqa: BLE001 - one message, not the platform
            self.log.exception("message not handled", exc_info=exc, extra={"fields": {
                "platform": self.name, "chat": event.source.chat_id}})


async def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
