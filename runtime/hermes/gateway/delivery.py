"""Sending a text to a chat named by a target string: ``platform:chat_id[:thread]``.

Webhook answers and cron results go to such targets; ``Deliveries`` holds the
profile's running adapters (the router's too) and hands the text to the named one's
``send`` (a chat platform queues it in its outbox, so a platform that is
reconnecting delivers it once it is back).
"""

from __future__ import annotations

from hermes.chats import Target, TargetError
from hermes.gateway.base import PlatformAdapter


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
