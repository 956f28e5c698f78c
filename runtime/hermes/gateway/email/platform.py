"""The ``email`` platform: a mailbox the agent reads over IMAP and answers over SMTP.

New (unread) mail is taken as it arrives (IMAP IDLE; polling where the server has
none) and marked read. Mail the receiving server does not vouch for
(``require_authentication``), mail from robots and the agent's own mail are dropped
with a log line; everyone else goes to the gateway, whose allowlist and pairing
decide. Image parts (attachments and inline images) go to the model with the text as one
turn (``hermes.gateway.images``); other attachments are not read. One email thread (by
``References``/``In-Reply-To``) is one conversation; the answer is plain text, sent in
the thread and quoting the question. A text for a chat with no thread (a scheduled job's
result) is a new message with ``settings.subject``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hermes.config.platform_schema import EmailSettings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.email.imap import Inbox, TooLarge
from hermes.gateway.email.message import (
    Mail,
    MailImage,
    authenticated,
    new_mail,
    parse_mail,
    reply_to,
)
from hermes.gateway.email.smtp import Outgoing
from hermes.gateway.images import IncomingImage
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.outbox import Rejected

THREADS = 1000
"""Threads whose last message is remembered, to answer in them."""


class EmailPlatform(MessagingAdapter):
    """One mailbox of one profile."""

    max_chars = 1_000_000
    """An answer is one message, however long."""

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, EmailSettings)  # the schema types it by ``kind``
        self.settings = settings
        key = f"platforms.enabled.{name}"
        if not config.token:
            raise ConfigError("no password — set token: ${secret:EMAIL_PASSWORD}, then "
                              "`hermes config set EMAIL_PASSWORD <password>`", key=f"{key}.token")
        upper = [user for user in config.allowed_users if user != user.lower()]
        if upper:
            raise ConfigError(f"write addresses in lower case ({upper[0]!r} → "
                              f"{upper[0].lower()!r}): senders are compared so",
                              key=f"{key}.allowed_users")
        self.address = settings.address.lower()
        self.inbox = Inbox(settings, config.token, f"{key}.token")
        self.outgoing = Outgoing(settings, config.token, f"{key}.token")
        self._threads: OrderedDict[tuple[str, str], Mail] = OrderedDict()

    async def connect(self) -> None:
        await self.inbox.close()
        await self.inbox.open()
        await self.outgoing.check()
        settings = self.settings
        how = "IDLE" if self.inbox.idle else f"polled every {settings.poll_interval:g} s"
        self.status.detail = (f"{self.address} via {settings.imap_host}:{settings.imap_port}"
                              f" ({how})")

    async def listen(self) -> None:
        while True:
            for uid in await self.inbox.unseen():
                try:
                    raw = await self.inbox.take(uid)
                except TooLarge as exc:
                    self.log.warning("mail too large: left in the mailbox, unanswered", extra={
                        "fields": {"platform": self.name, "uid": uid, "size": str(exc)}})
                    continue
                if raw is not None:
                    await self._received(parse_mail(raw))
            await self.inbox.wait()

    async def deliver(self, source: MessageSource, text: str) -> None:
        if "@" not in source.chat_id:
            raise Rejected(f"{source.chat_id!r} is not an email address")
        question = self._threads.get((source.chat_id, source.thread_id))
        message = reply_to(question, text, self.address) if question is not None else \
            new_mail(source.chat_id, self.settings.subject, text, self.address)
        await self.outgoing.send(message)

    async def disconnect(self) -> None:
        await self.inbox.close()

    async def _received(self, mail: Mail) -> None:
        fields = {"platform": self.name, "sender": mail.sender, "message": mail.message_id}
        if mail.sender == self.address or mail.robot:
            self.log.info("mail ignored: automated or our own", extra={"fields": fields})
            return
        if self.settings.require_authentication:
            vouched, why = authenticated(mail, self.settings.authserv_id)
            if not vouched:  # never answered: the From address may be forged
                self.log.warning("mail refused: sender not authenticated", extra={
                    "fields": fields | {"reason": why}})
                return
        source = MessageSource(self.name, mail.sender, "direct", mail.sender,
                               mail.sender_name or mail.sender, mail.thread_id)
        self._threads[(mail.sender, mail.thread_id)] = mail
        self._threads.move_to_end((mail.sender, mail.thread_id))
        while len(self._threads) > THREADS:
            self._threads.popitem(last=False)
        await self.dispatch(MessageEvent(source, mail.request, mail.message_id,
                                         tuple(_incoming(image) for image in mail.images)))


def _incoming(image: MailImage) -> IncomingImage:
    """An image part, decoded only once the gateway let the sender in."""

    async def decoded(max_bytes: int) -> bytes:
        return image.data()  # its size (within settings.max_bytes) was checked already

    return IncomingImage(image.name, decoded, image.size, image.mime)
