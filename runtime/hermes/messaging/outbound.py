"""``Outbound``: the chats this profile may send to, and how a text gets there.

The targets are those of cron's ``--deliver`` (``hermes.cron.targets``): a chat platform's
name (its ``home_channel``) or ``platform:chat_id[:thread]``, for every enabled platform
with chats (the API server and webhooks have none). How a text is sent is given by the
front door that runs the session (``sender``): the gateway hands it to its running
platform, ``hermes chat`` connects the platform for the moment as ``hermes cron run``
does. Where no front door gave one, nothing can be sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes.chats import Target, TargetError, parse_target
from hermes.config.platform_schema import MessagingSettings
from hermes.config.schema import PlatformsConfig
from hermes.cron.service import Deliver
from hermes.errors import did_you_mean, one_of


class OutboundError(ValueError):
    """A target this profile cannot send to, in one line naming the fix."""


@dataclass(frozen=True)
class Chat:
    """A platform this profile may send to."""

    name: str
    kind: str
    home_channel: str | None

    def describe(self) -> dict[str, Any]:
        return {"platform": self.name, "kind": self.kind,
                "home_channel": f"{self.name}:{self.home_channel}" if self.home_channel
                else None, "send_to": f"{self.name}:CHAT_ID" +
                (f" or {self.name} (its home channel)" if self.home_channel else "")}


class Outbound:
    """The chat platforms of one profile and the front door's way to reach them."""

    def __init__(self, platforms: PlatformsConfig):
        self.chats = {name: Chat(name, platform.kind, platform.home_channel)
                      for name, platform in platforms.enabled.items()
                      if isinstance(platform.settings, MessagingSettings)}
        self.sender: Deliver | None = None
        """Sends a text to a chat, blocking; set by the front door (None: it cannot)."""

    @property
    def can_send(self) -> bool:
        return bool(self.chats) and self.sender is not None

    def resolve(self, text: str) -> Target:
        """``text`` (a platform's name or ``platform:chat_id[:thread]``) as a target."""
        text = text.strip()
        if ":" not in text:
            home = self._chat(text).home_channel
            if not home:
                raise OutboundError(f"{text} has no home channel; write {text}:CHAT_ID (the "
                                    f"user sets one with `hermes config set platforms.enabled."
                                    f"{text}.home_channel CHAT_ID`)")
            return parse_target(f"{text}:{home}")
        try:
            target = parse_target(text)
        except TargetError as exc:
            raise OutboundError(str(exc)) from None
        self._chat(target.platform)
        return target

    def send(self, target: Target, text: str) -> None:
        """Send ``text`` to ``target`` (blocking); raises when it cannot."""
        if self.sender is None:
            raise OutboundError("messages cannot be sent from here (only from the gateway "
                                "and `hermes chat`)")
        self.sender(target, text)

    def _chat(self, name: str) -> Chat:
        chat = self.chats.get(name)
        if chat is None:
            known = one_of(self.chats) if self.chats else "none"
            raise OutboundError(f"platform {name!r} is not configured in this profile"
                                f"{did_you_mean(name, self.chats)} (chat platforms: {known}); "
                                "action=list shows the targets")
        return chat
