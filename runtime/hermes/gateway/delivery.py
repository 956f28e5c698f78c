"""Sending a text to a chat named by a target string: ``platform:chat_id[:thread]``.

Webhook answers and cron results go to such targets; ``Deliveries`` holds the
profile's running adapters (the router's too) and hands the text to the named one's
``send`` (a chat platform queues it in its outbox, so a platform that is
reconnecting delivers it once it is back).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hermes.chats import Target, TargetError
from hermes.gateway.base import PlatformAdapter

DELIVERY_TIMEOUT = 60.0
"""Seconds a delivery from a worker thread may take to be handed to its platform."""


class Deliveries:
    """The running adapters of one profile, by platform name."""

    def __init__(self) -> None:
        self.adapters: dict[str, PlatformAdapter] = {}

    async def deliver(self, target: Target, text: str) -> None:
        """Send ``text`` to ``target``; ``TargetError`` when its platform is not running."""
        adapter = self.adapters.get(target.platform)
        if adapter is None:
            running = ", ".join(sorted(self.adapters)) or "none"
            raise TargetError(f"cannot deliver to {target}: platform {target.platform!r} is "
                              f"not running (running: {running})")
        await adapter.send(target.source(), text)

    def blocking(self, loop: asyncio.AbstractEventLoop) -> Callable[[Target, str], None]:
        """``deliver`` for a worker thread (a cron run, a ``send_message`` call): handed to
        ``loop``, where the adapters run, and waited for."""

        def deliver(target: Target, text: str) -> None:
            sent = self.deliver(target, text)
            asyncio.run_coroutine_threadsafe(sent, loop).result(DELIVERY_TIMEOUT)

        return deliver
