"""Chats: where a message came from (``MessageSource``; the gateway keys sessions by it)
and where a text goes, as a delivery target ``platform:chat_id[:thread]``.

A leaf of the foundation (standard library only): the config validates targets with it,
cron stores them, the agent and tools carry a message's source, the gateway delivers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ChatType = Literal["direct", "group", "channel", "thread", "api"]


@dataclass(frozen=True)
class MessageSource:
    """Where a message came from; the gateway keys sessions by it."""

    platform: str
    """The platform's name in config (``platforms.enabled.<name>``)."""
    chat_id: str
    chat_type: ChatType = "direct"
    user_id: str = ""
    user_name: str = ""
    thread_id: str = ""

    @property
    def session_key(self) -> str:
        """One conversation: a chat, or a thread of it (users share a group's session)."""
        return ":".join((self.platform, self.chat_id, self.thread_id))


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
