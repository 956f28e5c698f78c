"""The ``telegram`` platform: a bot (python-telegram-bot's ``Bot``) polling for updates.

Text, photos and documents in (a photo or an image document goes to the model with its
caption as one turn: ``hermes.gateway.images``), voice notes and audio files in
(transcribed: ``hermes.gateway.voice``), text and voice notes (OGG/Opus) out.
Replies are split at 4096 UTF-16
units (paragraphs, then lines) and sent as MarkdownV2 (``markdown``), again as
plain text when Telegram rejects the markup. A chat sees "typing" while its turn runs.
In groups the bot answers only messages that mention it (``@name``) or reply to it; the
mention is taken out of the text. Forum topics are threads: replies go to the topic.
Edits are not read. The token never appears in the status, the log or an error
(Telegram puts it in URLs).
"""

from __future__ import annotations

import asyncio
import functools
import re
import warnings
from datetime import timedelta
from pathlib import PurePath
from typing import Any

from hermes.agent.attachments import ImageRefused
from hermes.config.platform_schema import TelegramSettings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.images import IncomingImage, read_capped, too_large, unreadable
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter
from hermes.gateway.messaging.text import split_text, utf16_length
from hermes.gateway.telegram.markdown import to_markdown_v2
from hermes.gateway.voice import IncomingAudio
from hermes.voice.audio import OGG_OPUS
from hermes.voice.base import Audio

CHAT_TYPES = {"private": "direct", "group": "group", "supergroup": "group",
              "channel": "channel"}
MAX_CHARS = 4096
DOWNLOAD_TIMEOUT = 60.0
"""Seconds a photo's or document's download may take."""


class TelegramPlatform(MessagingAdapter):
    """One bot of one profile."""

    max_chars = MAX_CHARS
    voice_format = OGG_OPUS

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, TelegramSettings)  # the schema types it by ``kind``
        self.settings = settings
        if not config.token:
            raise ConfigError("no bot token — make a bot with @BotFather, then `hermes config "
                              "set TELEGRAM_BOT_TOKEN <token>`", key=f"platforms.enabled.{name}"
                              ".token")
        self.token = config.token
        self.base_url = settings.base_url.rstrip("/")
        self._bot: Any = None
        self._offset: int | None = None

    def split(self, text: str) -> list[str]:
        return split_text(text, MAX_CHARS, utf16_length)

    async def connect(self) -> None:
        from telegram import Bot
        from telegram.error import Forbidden, InvalidToken, TelegramError
        from telegram.request import HTTPXRequest

        bot = Bot(self.token, base_url=f"{self.base_url}/bot",
                  base_file_url=f"{self.base_url}/file/bot",
                  request=HTTPXRequest(connection_pool_size=8),
                  get_updates_request=HTTPXRequest(read_timeout=10.0))
        try:
            await bot.initialize()  # getMe
        except TelegramError as exc:
            await bot.shutdown()  # its HTTP clients
            if isinstance(exc, InvalidToken | Forbidden):  # 401, 404, 403: retrying cannot help
                raise AccessDenied(f"{self.base_url} rejected the bot token — set the right "
                                   "one: `hermes config set TELEGRAM_BOT_TOKEN <token>`") from None
            raise ConnectionError(self._scrub(exc)) from None  # down: tried again, backoff
        await self.disconnect()
        self._bot = bot
        self.status.detail = f"@{bot.username} via {self.base_url}"

    async def listen(self) -> None:
        from telegram.error import RetryAfter as TelegramRetryAfter
        from telegram.error import TelegramError

        while True:
            try:
                updates = await self._bot.get_updates(
                    offset=self._offset, timeout=self.settings.poll_timeout,
                    allowed_updates=["message"])
            except TelegramRetryAfter as exc:
                await asyncio.sleep(_seconds(exc))
                continue
            except TelegramError as exc:
                raise ConnectionError(self._scrub(exc)) from None
            for update in updates:
                self._offset = update.update_id + 1
                event = self._event(update.message)
                if event is not None:
                    await self.dispatch(event)

    async def deliver(self, source: MessageSource, text: str) -> None:
        await self._translated(self._send(source, text))

    async def deliver_voice(self, source: MessageSource, sound: Audio) -> None:
        await self._translated(self._bot.send_voice(voice=sound.data, **_where(source)))

    async def _translated(self, sending: Any) -> None:
        """Await a send; Telegram's errors as the outbox knows them."""
        from telegram.error import BadRequest, Forbidden, NetworkError, TelegramError
        from telegram.error import RetryAfter as TelegramRetryAfter

        try:
            await sending
        except TelegramRetryAfter as exc:
            raise RetryAfter(_seconds(exc)) from None
        except (BadRequest, Forbidden) as exc:  # BadRequest is a NetworkError: first
            raise Rejected(self._scrub(exc)) from None
        except NetworkError as exc:
            raise Disconnected(self._scrub(exc)) from None
        except TelegramError as exc:
            raise Rejected(self._scrub(exc)) from None

    async def typing(self, source: MessageSource) -> None:
        if self._bot is not None and self.outbox.connected.is_set():
            await self._bot.send_chat_action(action="typing", **_where(source))

    async def disconnect(self) -> None:
        bot, self._bot = self._bot, None
        if bot is not None:
            try:
                await bot.shutdown()
            except Exception as exc:  # noqa: BLE001 - closing a broken client is fine
                self.log.info("telegram client closed with an error", extra={"fields": {
                    "platform": self.name, "error": self._scrub(exc)}})

    async def _send(self, source: MessageSource, text: str) -> None:
        """MarkdownV2 first (when on); plain text when Telegram cannot parse the markup."""
        from telegram.error import BadRequest

        if self.settings.markdown:
            try:
                await self._bot.send_message(text=to_markdown_v2(text),
                                             parse_mode="MarkdownV2", **_where(source))
                return
            except BadRequest as exc:
                if "parse" not in str(exc).lower():
                    raise
                self.log.warning("markup rejected; sent as plain text", extra={"fields": {
                    "platform": self.name, "chat": source.chat_id, "error": str(exc)}})
        await self._bot.send_message(text=text, **_where(source))

    def _event(self, message: Any) -> MessageEvent | None:
        """A text message, or a photo or document with its caption, as an event; None for
        anything else, and for group messages not addressed to the bot."""
        if message is None or message.from_user is None:
            return None
        images = self._images(message)
        audio = self._audio(message)
        if not message.text and not images and not audio:
            return None
        kind = CHAT_TYPES.get(message.chat.type, "group")
        text = (message.text or message.caption or "") if kind == "direct" else \
            self._addressed(message)
        if text is None:
            return None
        user = message.from_user
        thread = str(message.message_thread_id) if message.is_topic_message else ""
        source = MessageSource(self.name, str(message.chat.id), kind,  # type: ignore[arg-type]
                               str(user.id), user.username or user.full_name, thread)
        return MessageEvent(source, text, str(message.message_id), images, audio)

    def _audio(self, message: Any) -> tuple[IncomingAudio, ...]:
        """A voice note (OGG/Opus) or an audio file, downloaded only for an allowed sender."""
        found, name = (message.voice, "voice message") if message.voice else \
            (message.audio, "audio file")
        if found is None:
            return ()
        suffix = ".ogg" if message.voice else \
            (PurePath(getattr(found, "file_name", "") or "").suffix or ".mp3")
        return (IncomingAudio(name, functools.partial(self._download, name, found.file_id),
                              found.file_size, (found.mime_type or "").lower(), suffix),)

    def _images(self, message: Any) -> tuple[IncomingImage, ...]:
        """A photo (its largest size) or a document, downloaded only when the router asks
        (the sender is allowed by then)."""
        if message.photo:
            largest = message.photo[-1]
            return (self._incoming("photo", largest.file_id, largest.file_size, "image/jpeg"),)
        document = message.document
        if document is None:
            return ()
        return (self._incoming(document.file_name or "document", document.file_id,
                               document.file_size, (document.mime_type or "").lower()),)

    def _incoming(self, name: str, file_id: str, size: int | None, mime: str) -> IncomingImage:
        return IncomingImage(name, functools.partial(self._download, name, file_id),
                             size, mime)

    async def _download(self, name: str, file_id: str, max_bytes: int) -> bytes:
        """A file through getFile (whose size is checked first), then its bytes, refused
        once past ``max_bytes``."""
        import httpx
        from telegram.error import TelegramError

        if self._bot is None:
            raise unreadable(name, "Telegram", "not connected")
        try:
            found = await self._bot.get_file(file_id)
        except TelegramError as exc:
            raise unreadable(name, "Telegram", self._scrub(exc)) from None
        if found.file_size and found.file_size > max_bytes:
            raise ImageRefused(too_large(name, max_bytes, found.file_size))
        try:
            async with httpx.AsyncClient(timeout=DOWNLOAD_TIMEOUT) as client, \
                    client.stream("GET", str(found.file_path)) as response:
                if response.status_code != 200:
                    raise unreadable(name, "Telegram", f"HTTP {response.status_code}")
                return await read_capped(response.aiter_bytes(), max_bytes, name)
        except httpx.HTTPError as exc:
            raise unreadable(name, "Telegram", self._scrub(exc)) from None

    def _addressed(self, message: Any) -> str | None:
        """The text (or caption) of a group message for the bot (its mention taken out),
        else None."""
        me = self._bot.bot
        replied = message.reply_to_message
        to_me = replied is not None and replied.from_user is not None and \
            replied.from_user.id == me.id
        mention = re.compile(rf"@{re.escape(me.username)}\b", re.IGNORECASE)
        types = ["mention", "bot_command", "text_mention"]
        entities = message.parse_entities(types) if message.text else \
            message.parse_caption_entities(types)
        for entity, value in entities.items():
            if mention.search(value) or (entity.user is not None and entity.user.id == me.id):
                to_me = True
        if not to_me:
            return None
        text = message.text or message.caption or ""
        return mention.sub("", text).strip() or text

    def _scrub(self, exc: BaseException) -> str:
        """An error's text without the token (Telegram puts it in every URL)."""
        return f"{type(exc).__name__}: {exc}".replace(self.token, "<token>")


def _where(source: MessageSource) -> dict[str, Any]:
    thread = int(source.thread_id) if source.thread_id.lstrip("-").isdigit() else None
    return {"chat_id": source.chat_id, "message_thread_id": thread}


def _seconds(exc: Any) -> float:
    with warnings.catch_warnings():  # its int form is deprecated in favour of timedelta
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
