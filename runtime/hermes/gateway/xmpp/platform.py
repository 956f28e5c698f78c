"""The ``xmpp`` platform: the agent's XMPP account, one to one and in MUC rooms.

It logs in over verified TLS (STARTTLS, or direct TLS; plain text only to a loopback
server), shows itself online and joins the configured rooms without their history. A
chat message from anyone goes to the gateway (whose gate lets in ``allowed_users``,
bare JIDs, and offers strangers pairing); in a room only messages that name the agent's
nick or reply to it (XEP-0461) count, never the agent's own nor the history a room
replays (XEP-0203 delays). In a room the sender is known by the JID the room shows: in a
room that hides JIDs from the agent, nobody passes the allowlist. Answers are plain text,
split at ``max_chars``; a chat sees the agent composing (XEP-0085) while its turn runs.
Presence subscriptions are accepted from the users the gate lets in.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from typing import Any

from hermes.config.platform_kinds.xmpp import Settings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.gate import gate_for
from hermes.gateway.messaging.outbox import Disconnected
from hermes.gateway.xmpp.client import XmppAccount, login_for

REMEMBERED = 1000
"""Message ids the agent sent, remembered to recognise replies to it."""
VOICE_REFUSED = "Voice messages are not supported here yet; please write instead."
AUDIO = re.compile(r"\.(ogg|oga|opus|m4a|mp3|aac|wav|webm)$", re.IGNORECASE)


class XmppPlatform(MessagingAdapter):
    """One XMPP account of one profile."""

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, Settings)  # the schema types it by ``kind``
        self.settings = settings
        self.max_chars = settings.max_chars
        if not config.token:
            raise ConfigError("no password — give the account's password by reference: "
                              "token: ${secret:XMPP_PASSWORD}, then `hermes config set "
                              "XMPP_PASSWORD <password>`", key=f"platforms.enabled.{name}.token")
        _check_allowed_users(config.allowed_users, f"platforms.enabled.{name}.allowed_users")
        self.account = XmppAccount(login_for(settings, config.token), self.log, {
            "message": self._stanza, "message_error": self._refused,
            "presence_subscribe": self._subscribe}, self._lost)
        self.gate = gate_for(name, config, service.home, self.send, self.log)
        self._events: asyncio.Queue[MessageEvent | str] = asyncio.Queue()
        self._ours: OrderedDict[str, None] = OrderedDict()
        self._composing: set[str] = set()
        self._mention = re.compile(rf"(?<![\w@/]){re.escape(settings.nick)}(?![\w@])[:,]?",
                                   re.IGNORECASE)

    async def connect(self) -> None:
        self._drop_losses()
        me = await self.account.login()
        for room in self.settings.rooms:
            await self.account.join(room, self.settings.nick)
        rooms = f", {len(self.settings.rooms)} room(s)" if self.settings.rooms else ""
        self.status.detail = f"{me}{rooms}"

    async def listen(self) -> None:
        while True:
            item = await self._events.get()
            if isinstance(item, str):
                raise ConnectionError(item)
            await self.dispatch(item)

    async def deliver(self, source: MessageSource, text: str) -> None:
        if not self.account.connected:
            raise Disconnected("not connected to the XMPP server")
        self._composing.discard(source.chat_id)
        self._remember(self.account.send(source.chat_id, text, self._kind(source.chat_id),
                                         "active"))

    async def typing(self, source: MessageSource) -> None:
        if self.account.connected and source.chat_id not in self._composing:
            self._composing.add(source.chat_id)
            self.account.send(source.chat_id, None, self._kind(source.chat_id), "composing")

    async def disconnect(self) -> None:
        await self.account.close()

    def _kind(self, chat: str) -> str:
        return "groupchat" if chat in self.settings.rooms else "chat"

    def _drop_losses(self) -> None:
        """Forget the losses of earlier connections; messages they brought still count."""
        earlier, self._events = self._events, asyncio.Queue()
        while not earlier.empty():
            if not isinstance(item := earlier.get_nowait(), str):
                self._events.put_nowait(item)

    def _lost(self, reason: str) -> None:
        self._events.put_nowait(reason)

    def _stanza(self, message: Any) -> None:
        """A message stanza from slixmpp: queued for ``listen`` when it is for the agent."""
        event = self._event(message)
        if event is not None:
            self._events.put_nowait(event)

    def _event(self, message: Any) -> MessageEvent | None:
        body = str(message["body"] or "")
        url = str(message["oob"]["url"] or "")
        if not body.strip() and not url:
            return None
        sender = message["from"]
        if message["type"] == "groupchat":
            return self._room_event(message, str(sender.bare), str(sender.resource), body)
        if message["type"] not in ("chat", "normal") or sender.bare in self.settings.rooms:
            return None  # errors, headlines, and private messages through a room
        source = MessageSource(self.name, str(sender.bare), "direct", str(sender.bare),
                               str(sender.bare))
        return self._with_voice(MessageEvent(source, body, str(message["id"])), url)

    def _room_event(self, message: Any, room: str, nick: str, body: str) -> MessageEvent | None:
        if room not in self.settings.rooms or not nick or nick == self.settings.nick:
            return None  # the room itself (its subject), or the agent's own echo
        if message.get_plugin("delay", check=True) is not None:
            return None  # history the room replays
        text: str | None = body
        if self.settings.require_mention:
            text = self._addressed(message, room, body)
        if text is None:
            return None
        user = self.account.real_jid(room, nick)
        if not user:
            self.log.info("room message ignored: the room hides the sender's JID", extra={
                "fields": {"platform": self.name, "room": room, "nick": nick}})
            return None
        source = MessageSource(self.name, room, "group", user, nick)
        return self._with_voice(MessageEvent(source, text, str(message["id"])),
                                str(message["oob"]["url"] or ""))

    def _addressed(self, message: Any, room: str, body: str) -> str | None:
        """The text of a room message for the agent (its nick taken out), else None."""
        reply = message.get_plugin("reply", check=True)
        to_me = reply is not None and (
            str(reply["to"]) == f"{room}/{self.settings.nick}" or reply["id"] in self._ours)
        if not to_me and not self._mention.search(body):
            return None
        text = re.sub(r"[ \t]{2,}", " ", self._mention.sub("", body)).strip(" ,:")
        return text or body

    def _with_voice(self, event: MessageEvent, url: str) -> MessageEvent | None:
        """A voice note (an audio attachment link) is refused in one line, to an allowed
        sender; transcription is not wired in for XMPP yet."""
        if not AUDIO.search(url.split("?", 1)[0]):
            return event
        if self.gate.allows(event.source.user_id):
            self.outbox.put(event.source, VOICE_REFUSED)
        return None

    def _refused(self, message: Any) -> None:
        """A message of the agent the server or a room bounced (not in the room, too
        long, throttled): logged, as XMPP reports it after the send."""
        self.log.warning("message refused by the server", extra={"fields": {
            "platform": self.name, "chat": str(message["from"].bare),
            "error": str(message["error"]["condition"])}})

    def _subscribe(self, presence: Any) -> None:
        """Let a user the gate admits see the agent online."""
        jid = str(presence["from"].bare)
        if self.gate.allows(jid):
            self.account.authorize(jid)

    def _remember(self, message_id: str) -> None:
        self._ours[message_id] = None
        while len(self._ours) > REMEMBERED:
            self._ours.popitem(last=False)



def _check_allowed_users(users: list[str], key: str) -> None:
    """Bare JIDs in lower case: senders are compared so (JIDs ignore case)."""
    for user in users:
        bare = user.lower().split("/", 1)[0]
        if user != bare:
            raise ConfigError(f"write bare JIDs in lower case ({user!r} → {bare!r}): "
                              "senders are compared so", key=key)
