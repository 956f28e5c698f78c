"""Delivering a job's answer without the gateway (``hermes cron tick | run``): the target
platform's adapter is made for the moment, connects, sends the answer (split as the
platform needs, its rate limit's ``retry_after`` honoured) and lets go. Only chat
platforms can be sent to; the gateway's own platforms (api_server, webhook) cannot.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol, runtime_checkable

from hermes.chats import MessageSource, Target, TargetError
from hermes.config.schema import PlatformsConfig
from hermes.cron.service import Deliver

SEND_ATTEMPTS = 3
MAX_WAIT = 60.0


def direct_deliver(runtime: Any, log: logging.Logger) -> Deliver:
    """A ``Deliver`` that sends through a platform adapter of ``runtime``'s profile."""

    def deliver(target: Target, text: str) -> None:
        asyncio.run(_send(runtime, target, text, log))

    return deliver


@runtime_checkable
class ChatSender(Protocol):
    """What a chat platform's adapter offers (``MessagingAdapter``) to send without its
    listening loop."""

    async def connect(self) -> None: ...

    def split(self, text: str) -> list[str]: ...

    async def deliver(self, source: MessageSource, text: str) -> None: ...

    async def disconnect(self) -> None: ...


async def _send(runtime: Any, target: Target, text: str, log: logging.Logger) -> None:
    adapter = _adapter(runtime, target, log)
    if not isinstance(adapter, ChatSender):
        raise TargetError(f"cannot deliver to {target}: platform {target.platform!r} has no "
                          "chats to send to")
    await adapter.connect()
    try:
        for part in adapter.split(text):
            await _deliver_part(adapter, target, part)
    finally:
        await adapter.disconnect()


async def _deliver_part(adapter: ChatSender, target: Target, part: str) -> None:
    from hermes.gateway.messaging.outbox import RetryAfter

    for attempt in range(SEND_ATTEMPTS):
        try:
            await adapter.deliver(target.source(), part)
            return
        except RetryAfter as exc:
            if attempt == SEND_ATTEMPTS - 1:
                raise
            await asyncio.sleep(min(max(exc.seconds, 0.0), MAX_WAIT))


def _adapter(runtime: Any, target: Target, log: logging.Logger) -> Any:
    from hermes.gateway.platforms import build_adapters
    from hermes.gateway.service import ProfileService

    platforms = runtime.settings.platforms
    if target.platform not in platforms.enabled:
        raise TargetError(f"cannot deliver to {target}: platform {target.platform!r} is not "
                          "enabled")
    one = PlatformsConfig.model_construct(
        name=platforms.name, enabled={target.platform: platforms.enabled[target.platform]})
    failed: dict[str, Any] = {}
    built = build_adapters(one, ProfileService(runtime.home, runtime, log), None, failed)
    if failed:
        raise TargetError(f"cannot deliver to {target}: {failed[target.platform].detail}")
    return built[0][1]
