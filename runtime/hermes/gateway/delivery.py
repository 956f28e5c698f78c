"""Sending a text to a chat named by a target string: ``platform:chat_id[:thread]``.

Webhook answers and cron results go to such targets; ``Deliveries`` holds the
profile's running adapters (the router's too) and hands the text to the named one's
``send`` (a chat platform queues it in its outbox, so a platform that is
reconnecting delivers it once it is back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes.gateway.base import MessageSource, PlatformAdapter

TARGET = re.compile(r"^(?P<platform>[A-Za-z0-9_-]+):(?P<chat>[^:\s]+)(?::(?P<thread>[^:\s]+))?$")
# A Matrix room id or alias keeps its server (which may carry a port) in the chat id;
# a thread there is an event id, which starts with ``$``.
MATRIX_TARGET = re.compile(r"^(?P<platform>[A-Za-z0-9_-]+):(?P<chat>[!#][^:\s]+:[^\s$]+?)"
                           r"(?::(?P<thread>\$[^:\s]+))?$")
EXAMPLE = ("telegram:123456789, telegram:-1001234567890:42 (a thread) or "
           "matrix:!room:example.org")


class TargetError(ValueError):
    """A delivery target that is not ``platform:chat_id[:thread]`` or names no platform."""


@dataclass(frozen=True)
class Target:
    """Where a text goes."""

    platform: str
    chat_id: str
    thread_id: str = ""

    def source(self) -> MessageSource:
        """The chat as the adapter's ``send`` takes it."""
        return MessageSource(self.platform, self.chat_id, chat_type="direct",
                             thread_id=self.thread_id)

    def __str__(self) -> str:
        return ":".join(p for p in (self.platform, self.chat_id, self.thread_id) if p)


def parse_target(text: str) -> Target:
    """``platform:chat_id[:thread]`` as a ``Target``; ``TargetError`` with an example."""
    match = MATRIX_TARGET.match(text.strip()) or TARGET.match(text.strip())
    if match is None:
        raise TargetError(f"{text!r} is not a delivery target; write platform:chat_id"
                          f"[:thread], e.g. {EXAMPLE}")
    return Target(match["platform"], match["chat"], match["thread"] or "")


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
