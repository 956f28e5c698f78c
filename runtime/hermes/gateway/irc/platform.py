"""The ``irc`` platform: the agent as a nick on one IRC server.

It connects with TLS (the certificate verified) unless told otherwise, logs in to its
services account with SASL PLAIN when ``settings.password`` is set (and fails rather
than go on without it), takes ``nick_`` when its nick is taken and its own back when it
is free, and joins ``settings.channels``. Private messages are answered (the gate's
allowlist and pairing apply); in channels only messages addressed to it (``hermes:
...``) or naming it, unless ``require_mention`` is off. CTCP requests and notices are
never answered (the IRC rule for automatic replies).

Answers are plain text: Markdown markers and IRC's formatting and control codes are
taken out; each line is its own message, a long one cut (at spaces, never inside a
character) so that the whole ``:nick!user@host PRIVMSG target :text`` line the server
relays stays within IRC's 512 bytes. Messages leave one at a time at ``send_rate``, and
wait when the server says it throttles us. Where the server relays message tags, the
chat sees IRCv3 ``+typing`` while a turn runs. Who a sender is: ``hermes.gateway.irc.identity``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from hermes.config.platform_kinds.irc import Settings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.irc.client import IrcClient, login_for
from hermes.gateway.irc.identity import AllowList, Sender
from hermes.gateway.irc.protocol import (
    Line,
    ProtocolError,
    line,
    message_budget,
    messages,
    received_text,
)
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter

LONGEST_CHANNEL = "#" + "x" * 49
NICK_CHARS = r"\w\[\]\\`^{|}-"


class IrcPlatform(MessagingAdapter):
    """One nick of one profile on one IRC server."""

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, Settings)  # the schema types it by ``kind``
        self.settings = settings
        key = f"platforms.enabled.{name}"
        if config.token:
            raise ConfigError("IRC has no token: a services account's password is "
                              "settings.password (SASL), a server's is "
                              "settings.server_password", key=f"{key}.token")
        self.allow = AllowList(config.allowed_users, f"{key}.allowed_users")
        self.client = IrcClient(login_for(settings, key), self.log, settings.ping_interval,
                                settings.regain_interval)

    def split(self, text: str) -> list[str]:
        """Parts that fit any target (``deliver`` cuts again to the exact budget)."""
        return messages(text, message_budget(LONGEST_CHANNEL))

    async def send(self, source: MessageSource, text: str) -> None:
        for part in messages(text, self._budget(source.chat_id)):
            self.outbox.put(source, part)

    def _budget(self, target: str) -> int:
        return message_budget(target, self.client.prefix_length())

    async def connect(self) -> None:
        await self.client.open()
        for channel in self.settings.channels:
            try:
                await self.client.join(channel)
            except Rejected as exc:  # the others still serve; the log says why
                self.log.warning("irc channel not joined", extra={"fields": {
                    "platform": self.name, "error": str(exc)}})
        self.status.detail = self._detail()

    def _detail(self) -> str:
        settings = self.settings
        where = f"{self.client.nick} on {settings.server}:{settings.port}"
        account = f", account {settings.sasl_username or settings.nick}" \
            if settings.password else ""
        return f"{where} ({'TLS' if settings.tls else 'plain text'}{account})"

    async def listen(self) -> None:
        while True:
            await self._received(await self.client.next_message())

    async def deliver(self, source: MessageSource, text: str) -> None:
        client = self.client
        if client.lost:
            raise Disconnected(client.lost)
        wait = client.throttled_until - time.monotonic()
        if wait > 0:
            raise RetryAfter(wait, f"the server throttles us for {wait:.1f} s")
        target = source.chat_id
        if client.is_channel(target):
            await client.join(target)
        try:
            lines = [line("PRIVMSG", target, part)
                     for part in messages(text, self._budget(target))]
        except ProtocolError as exc:  # a target with a space or a line break
            raise Rejected(str(exc)) from exc
        for text_line in lines:
            await client.write(text_line)

    async def typing(self, source: MessageSource) -> None:
        """IRCv3 ``+typing`` (a client tag), where the server relays tags."""
        if "message-tags" in self.client.caps and not self.client.lost:
            await self.client.write(f"@+typing=active {line('TAGMSG', source.chat_id)}")

    async def disconnect(self) -> None:
        await self.client.close("Hermes agent stopping")

    async def _received(self, message: Line) -> None:
        target, text = message.params
        if "!" not in message.source or text.startswith("\x01"):
            return  # a server's message, or a CTCP request (ACTION, VERSION, ...)
        group = self.client.is_channel(target)
        wanted = self._addressed(received_text(text)) if group and \
            self.settings.require_mention else received_text(text)
        if not wanted:
            return  # before any WHOX query: a busy channel's lines cost the server nothing
        account = self.client.account_of(message)
        if account is None:  # no account-tag: WHOX, where the server has it
            account = await self.client.lookup_account(message.nick)
        sender = Sender.of(message.source, account)
        source = MessageSource(self.name, target if group else sender.nick,
                               "group" if group else "direct", self.allow.user_id(sender),
                               sender.nick)
        await self.dispatch(MessageEvent(source, wanted))
        self.status.detail = self._detail()  # the nick may have been regained meanwhile

    def _addressed(self, text: str) -> str | None:
        """The text of a channel message for the agent (``nick:`` taken off), else None."""
        nicks = "|".join(re.escape(n) for n in {self.client.nick, self.settings.nick})
        leading = re.match(rf"\s*(?:{nicks})\s*[:,]\s*(.*)", text, re.I | re.S)
        if leading:
            return leading[1].strip() or None
        named = re.search(rf"(?<![{NICK_CHARS}])(?:{nicks})(?![{NICK_CHARS}])", text, re.I)
        return text if named else None
