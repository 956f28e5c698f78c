"""The ``signal`` platform: the agent's Signal account, through a ``signal-cli`` daemon's
JSON-RPC (``send``, ``sendTyping``, ``getAttachment``) and its event stream.

Direct messages are answered; in groups only messages that mention the agent or quote
one of its messages (``settings.require_mention: false`` answers all), with the mention
taken out. A person is known by phone number or, when they hide it, by account id (ACI
uuid): an ``allowed_users`` entry matching either lets them in, and a person paired
without one is remembered by account id, which does not change with the number. Replies
go to the number (or account id); a group is the chat ``group.<groupId>``. Signal shows
no Markdown: its bold, italic, strike and code go as Signal's style ranges (``styles``),
and as the model wrote them when the daemon refuses those. Answers are split at 2000
characters (what Signal apps send as one message body) on paragraphs, then lines.
Attachments go to the gateway as images, voice notes and audio files to be transcribed
(``hermes.gateway.voice``), fetched from the daemon only for a sender it lets in; with
``/voice on`` the spoken answer goes as an OGG/Opus attachment. The chat shows "typing"
while a turn runs.
"""

from __future__ import annotations

import functools
from pathlib import PurePath
from typing import Any

from hermes.config.platform_kinds.signal import Settings
from hermes.config.schema import PlatformConfig
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.images import IncomingImage
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.outbox import Rejected
from hermes.gateway.signal.client import SignalDaemon, SignalError
from hermes.gateway.signal.events import UNNAMED, Attachment, SignalMessage, received
from hermes.gateway.signal.styles import to_signal
from hermes.gateway.voice import IncomingAudio
from hermes.voice.audio import OGG_OPUS
from hermes.voice.base import Audio

AUDIO_SUFFIXES = {"audio/aac": ".aac", "audio/mp4": ".m4a", "audio/x-m4a": ".m4a",
                  "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "audio/wav": ".wav"}
MAX_CHARS = 2000
"""Characters per message: longer bodies are sent by Signal apps as a text attachment."""


class SignalPlatform(MessagingAdapter):
    """One Signal account of one profile."""

    max_chars = MAX_CHARS
    voice_format = OGG_OPUS

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, Settings)  # the schema types it by ``kind``
        self.settings = settings
        self.daemon = SignalDaemon(settings.url, settings.account)
        self.allowed = frozenset(config.allowed_users)

    async def connect(self) -> None:
        await self.daemon.close()
        version = await self.daemon.call("version")
        release = version.get("version", "?") if isinstance(version, dict) else "?"
        self.status.detail = f"{self.settings.account} via signal-cli {release} at " \
                             f"{self.settings.url}"

    async def listen(self) -> None:
        async for event in self.daemon.events():
            message = received(event, self.settings.account)
            if message is not None:
                await self._received(message)

    async def deliver(self, source: MessageSource, text: str) -> None:
        """With Markdown's styles as Signal's ranges; as written when the daemon refuses
        them."""
        plain, styles = to_signal(text)
        if styles:
            try:
                await self.daemon.send(source.chat_id, plain, styles)
                return
            except (Rejected, SignalError) as exc:
                self.log.warning("styles rejected; sent as plain text", extra={"fields": {
                    "platform": self.name, "chat": source.chat_id, "error": str(exc)}})
        await self.daemon.send(source.chat_id, text if styles else plain)

    async def deliver_voice(self, source: MessageSource, sound: Audio) -> None:
        """A spoken answer, as an audio attachment Signal plays in the chat."""
        await self.daemon.send_file(source.chat_id, sound.data, sound.mime,
                                    f"answer{sound.suffix}")

    async def typing(self, source: MessageSource) -> None:
        if self.outbox.connected.is_set():
            await self.daemon.typing(source.chat_id)

    async def disconnect(self) -> None:
        await self.daemon.close()

    async def _received(self, message: SignalMessage) -> None:
        if message.group and self.settings.require_mention and not message.mentioned:
            return
        user = self._user(message)
        chat = f"group.{message.group}" if message.group else (message.number or message.uuid)
        source = MessageSource(self.name, chat, "group" if message.group else "direct", user,
                               message.name or message.number or user)
        sounds = tuple(a for a in message.attachments if a.mime.startswith("audio/"))
        await self.dispatch(MessageEvent(
            source, message.text, str(message.timestamp),
            tuple(self._image(a) for a in message.attachments if a not in sounds),
            tuple(self._audio(a) for a in sounds)))

    def _user(self, message: SignalMessage) -> str:
        """The sender as ``allowed_users`` names them, else their account id."""
        for known in (message.number, message.uuid):
            if known and known in self.allowed:
                return known
        return message.uuid or message.number

    def _audio(self, attachment: Attachment) -> IncomingAudio:
        """A voice note (AAC, as Signal apps record them) or an audio file, transcribed
        before the turn (``hermes.gateway.voice``)."""
        name = "voice message" if attachment.name == UNNAMED else attachment.name
        suffix = PurePath(attachment.name).suffix or AUDIO_SUFFIXES.get(attachment.mime, ".aac")
        return IncomingAudio(name, functools.partial(self.daemon.attachment, attachment.id,
                                                     name), attachment.size, attachment.mime,
                             suffix)

    def _image(self, attachment: Attachment) -> IncomingImage:
        return IncomingImage(attachment.name, functools.partial(
            self.daemon.attachment, attachment.id, attachment.name), attachment.size,
            attachment.mime)
