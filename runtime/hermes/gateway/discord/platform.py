"""The ``discord`` platform: a bot (discord.py) on Discord's gateway, answering over REST.

Direct messages are answered (the gateway's ``Gate``: allowlist, pairing); in server
channels only messages that mention the bot, reply to it, or are in a thread it answered
in (``allowed_channels`` and ``allowed_roles`` narrow that further); the mention is taken
out of the text. A thread is its own conversation, answered in the thread. Images
attached go to the model with the text as one turn (``hermes.gateway.images``); voice
messages and audio files are transcribed first (``hermes.gateway.voice``), and spoken
answers are sent as OGG/Opus audio files. The built-in
commands and skills are the bot's slash commands (``commands``): an invocation runs as
the text ``/name argument`` would, its response deferred ("thinking…") and filled with
the first part of the reply. Replies are split at 2000 characters, code blocks closed and
reopened across the cuts (``markdown``), and never ping anyone (mentions in them are shown,
not sent); ``discord:@USER_ID`` targets a user's direct messages. 429s are waited out
(``retry_after``: discord.py up to 30 s, the outbox beyond). Without
the Message Content intent Discord closes the gateway (4014): the platform is ``failed``
with how to turn it on.
"""

from __future__ import annotations

import functools
import re
import time
from collections import OrderedDict
from pathlib import PurePath
from typing import Any

from hermes.agent.attachments import ImageRefused
from hermes.config.platform_kinds.discord import Settings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.discord.commands import command_payloads, invocation_text
from hermes.gateway.discord.markdown import escape_mentions, split_markdown
from hermes.gateway.images import IncomingImage, read_capped, too_large, unreadable
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.gate import gate_for
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter
from hermes.gateway.voice import IncomingAudio
from hermes.voice.audio import OGG_OPUS
from hermes.voice.base import Audio

MAX_CHARS = 2000
REMEMBERED = 1000
"""Messages sent (and threads answered in) remembered to recognise replies to the bot."""
DOWNLOAD_TIMEOUT = 60.0
DEFERRED_FOR = 14 * 60.0
"""Seconds a deferred slash command's response can still be filled (Discord: 15 min)."""
EPHEMERAL = 64
TYPING_LASTS = 8.0
"""Seconds between typing calls for one channel (Discord shows it for 10 s)."""
NOT_HERE = "I don't answer in this channel."
VOICE_MESSAGE = 1 << 13
"""A message's flag: it is a voice message (its one attachment the recording)."""
NOT_ALLOWED = ("You are not allowed to talk to this agent. Send me a direct message to ask "
               "for access.")
REFUSALS = {
    4004: "Discord closed the gateway: the bot token was revoked — set the new one: `hermes "
          "config set DISCORD_BOT_TOKEN <token>`",
    4014: "Discord refused the Message Content intent — turn it on: Developer Portal → your "
          "application → Bot → Privileged Gateway Intents → Message Content Intent"}
"""Gateway close codes after which connecting again cannot help: the platform fails."""


class DiscordPlatform(MessagingAdapter):
    """One bot of one profile."""

    max_chars = MAX_CHARS
    voice_format = OGG_OPUS

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, Settings)  # the schema types it by ``kind``
        self.settings = settings
        if not config.token:
            raise ConfigError("no bot token — Developer Portal → your application → Bot → "
                              "Reset Token, then `hermes config set DISCORD_BOT_TOKEN <token>`",
                              key=f"platforms.enabled.{name}.token")
        self.token = config.token
        self.gate = gate_for(name, config, service.home, self.send, self.log)
        self._client: Any = None
        self._refused: str | None = None
        """Why Discord closed the gateway for good (the next connect fails with it)."""
        self._ours: OrderedDict[int, None] = OrderedDict()
        """Messages the bot sent and threads it answered in."""
        self._direct: dict[int, int] = {}
        """Direct-message channels opened for ``@USER_ID`` targets, by user."""
        self._typed: dict[int, float] = {}
        """Until when each channel shows "typing" already."""
        self._registered = False
        """Whether the slash commands were registered (once, when first listening: not for
        a cron delivery, which connects only to send)."""
        self._deferred: dict[str, tuple[str, float]] = {}
        """Deferred slash commands by conversation: the interaction token, its deadline."""

    def split(self, text: str) -> list[str]:
        return split_markdown(text, MAX_CHARS)

    async def connect(self) -> None:
        import discord

        from hermes.gateway.discord.client import HermesClient

        if self._refused:
            raise AccessDenied(self._refused)
        await self.disconnect()
        client = HermesClient(self.settings.api_base, self._message, self._interaction)
        try:
            await client.login(self.token)
        except discord.LoginFailure:
            await client.close()
            raise AccessDenied(f"{self.settings.api_base} rejected the bot token — set the "
                               "right one: `hermes config set DISCORD_BOT_TOKEN <token>`") \
                from None
        except Exception as exc:
            await client.close()
            raise ConnectionError(self._scrub(exc)) from None
        self._client = client
        self.status.detail = f"@{client.user} via {self.settings.api_base}"

    async def listen(self) -> None:
        import discord

        if self.settings.slash_commands and not self._registered:
            await self._register(self._client)
        try:
            await self._client.connect(reconnect=False)  # RECONNECT (op 7) resumes inside
        except (discord.PrivilegedIntentsRequired, discord.ConnectionClosed) as exc:
            self._refused = REFUSALS.get(getattr(exc, "code", 4014))
            raise ConnectionError(self._refused or self._scrub(exc)) from None

    async def deliver(self, source: MessageSource, text: str) -> None:
        if self._client is None:
            raise Disconnected("not connected")
        await self._translated(self._text(source, text))

    async def deliver_voice(self, source: MessageSource, sound: Audio) -> None:
        """A spoken answer, as an audio file Discord plays in the chat."""
        import io

        import discord

        if self._client is None:
            raise Disconnected("not connected")
        channel = self._client.get_partial_messageable(await self._channel_id(source))
        upload = discord.File(io.BytesIO(sound.data), filename=f"answer{sound.suffix}")
        await self._translated(channel.send(file=upload,
                                            allowed_mentions=discord.AllowedMentions.none()))

    async def _text(self, source: MessageSource, text: str) -> None:
        if not await self._fill_deferred(source, text):
            await self._post(source, text)

    async def _translated(self, sending: Any) -> None:
        """Await a send; Discord's errors as the outbox knows them."""
        import aiohttp
        import discord

        try:
            await sending
        except discord.RateLimited as exc:
            raise RetryAfter(exc.retry_after) from None
        except (discord.Forbidden, discord.NotFound) as exc:
            raise Rejected(self._scrub(exc)) from None
        except discord.HTTPException as exc:
            if exc.status >= 500:
                raise  # retried with backoff
            raise Rejected(self._scrub(exc)) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise Disconnected(self._scrub(exc)) from None

    async def typing(self, source: MessageSource) -> None:
        """Discord's indicator lasts 10 s: one call per channel per ``TYPING_LASTS``."""
        channel = int(source.thread_id or source.chat_id) if not source.chat_id.startswith(
            "@") else 0
        if self._client is None or not self.outbox.connected.is_set() or not channel or \
                time.monotonic() < self._typed.get(channel, 0.0):
            return
        self._typed[channel] = time.monotonic() + TYPING_LASTS
        await self._client.http.send_typing(channel)

    async def disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception as exc:  # noqa: BLE001 - closing a broken client is fine
                self.log.info("discord client closed with an error", extra={"fields": {
                    "platform": self.name, "error": self._scrub(exc)}})

    # --- sending -----------------------------------------------------------------

    async def _post(self, source: MessageSource, text: str) -> None:
        import discord

        channel = self._client.get_partial_messageable(await self._channel_id(source))
        sent = await channel.send(escape_mentions(text),
                                  allowed_mentions=discord.AllowedMentions.none())
        self._remember(sent.id, int(source.thread_id or 0))

    async def _channel_id(self, source: MessageSource) -> int:
        """Where a reply goes: the thread, the channel, or for ``@USER_ID`` (a target such
        as ``discord:@123456789012345678``) that user's direct-message channel."""
        if not source.chat_id.startswith("@"):
            return int(source.thread_id or source.chat_id)
        user = int(source.chat_id[1:])
        if user not in self._direct:
            opened = await self._client.http.start_private_message(user)
            self._direct[user] = int(opened["id"])
        return self._direct[user]

    async def _fill_deferred(self, source: MessageSource, text: str) -> bool:
        """The first reply to a slash command fills its deferred response (when Discord
        refuses that, the reply is posted in the channel instead)."""
        import discord

        token, deadline = self._deferred.pop(source.session_key, ("", 0.0))
        if not token or time.monotonic() > deadline:
            return False
        try:
            await self._client.edit_original(token, escape_mentions(text))
        except (discord.Forbidden, discord.NotFound) as exc:
            self.log.warning("slash command response not filled; posted instead", extra={
                "fields": {"platform": self.name, "error": self._scrub(exc)}})
            return False
        self._remember(int(source.thread_id or 0))
        return True

    # --- receiving ---------------------------------------------------------------

    async def _message(self, message: Any) -> None:
        """A message from the gateway: dispatched when it is for the bot."""
        client = self._client
        if client is None or message.author.bot or message.type.value not in (0, 19):
            return  # others' bots, the bot itself, joins, pins, ...
        guild = message.guild.id if message.guild else getattr(message.channel, "guild_id", None)
        source = self._source(message.channel, guild, message.author)
        if source is None:
            return
        text = message.content if source.chat_type == "direct" else self._addressed(message)
        if text is None:
            return
        images, audio = _split_attachments(message.attachments)
        if not text.strip() and not images and not audio:
            return
        voice_note = bool(message.flags.value & VOICE_MESSAGE)
        await self.dispatch(MessageEvent(source, text, str(message.id),
                                         tuple(self._image(a) for a in images),
                                         tuple(self._audio(a, voice_note) for a in audio)))

    async def _interaction(self, interaction: Any) -> None:
        """A slash command: deferred, then run as its text; strangers are told at once
        (only they see it) and pairing is offered in direct messages."""
        text = invocation_text(interaction.data or {}) if interaction.type.value == 2 else None
        user = interaction.user
        channel = interaction.channel or \
            self._client.get_partial_messageable(interaction.channel_id)
        if text is None:
            return
        source = self._source(channel, interaction.guild_id, user)
        if source is None:  # a channel outside allowed_channels
            await self._tell(interaction, NOT_HERE)
            return
        if not self.gate.allows(source.user_id) or not self._member_allowed(user, source):
            await self._tell(interaction, NOT_ALLOWED)
            return
        await self._client.respond(interaction, {"type": 5})
        self._deferred[source.session_key] = (interaction.token,
                                              time.monotonic() + DEFERRED_FOR)
        await self.dispatch(MessageEvent(source, text, str(interaction.id)))

    async def _tell(self, interaction: Any, text: str) -> None:
        """Answer a slash command at once, seen only by the one who used it."""
        await self._client.respond(interaction, {"type": 4, "data": {
            "content": text, "flags": EPHEMERAL}})

    def _source(self, channel: Any, guild: int | None, user: Any) -> MessageSource | None:
        """The conversation of a message (a thread's parent is the chat), None in a channel
        outside ``allowed_channels``."""
        import discord

        name = getattr(user, "global_name", None) or user.name
        if guild is None:
            return MessageSource(self.name, str(channel.id), "direct", str(user.id), name)
        thread = isinstance(channel, discord.Thread)  # one not cached: a channel of its own
        chat = str(channel.parent_id if thread else channel.id)
        allowed = self.settings.allowed_channels
        if allowed and chat not in allowed:
            return None
        return MessageSource(self.name, chat, "group", str(user.id), name,
                             str(channel.id) if thread else "")

    def _addressed(self, message: Any) -> str | None:
        """The text of a server message for the bot (its mention taken out), else None."""
        me = self._client.user
        source_thread = getattr(message.channel, "id", 0)
        reference = message.reference
        to_me = me in message.mentions or source_thread in self._ours or (
            reference is not None and (reference.message_id in self._ours or _author_is(
                reference.resolved, me.id)))
        if not to_me or not self._member_allowed(message.author, None):
            return None
        mention = re.compile(rf"<@!?{me.id}>\s*[:,]?")
        return re.sub(r"[ \t]{2,}", " ", mention.sub("", message.content)).strip()

    def _member_allowed(self, user: Any, source: MessageSource | None) -> bool:
        roles = self.settings.allowed_roles
        if not roles or (source is not None and source.chat_type == "direct"):
            return True
        held = {str(role.id) for role in getattr(user, "roles", [])}
        return bool(held & set(roles))

    def _audio(self, attachment: Any, voice_note: bool) -> IncomingAudio:
        """A voice message or audio file, downloaded (and transcribed) only for an allowed
        sender (``hermes.gateway.voice``)."""
        name = "voice message" if voice_note else attachment.filename
        return IncomingAudio(name, functools.partial(self._download, name, attachment.url),
                             attachment.size, (attachment.content_type or "").split(";")[0]
                             .lower(), PurePath(attachment.filename).suffix or ".ogg")

    def _image(self, attachment: Any) -> IncomingImage:
        return IncomingImage(attachment.filename, functools.partial(
            self._download, attachment.filename, attachment.url), attachment.size,
            (attachment.content_type or "").split(";")[0].lower())

    async def _download(self, name: str, url: str, max_bytes: int) -> bytes:
        import httpx

        try:
            async with httpx.AsyncClient(timeout=DOWNLOAD_TIMEOUT) as client, \
                    client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise unreadable(name, "Discord", f"HTTP {response.status_code}")
                declared = int(response.headers.get("content-length") or 0)
                if declared > max_bytes:
                    raise ImageRefused(too_large(name, max_bytes, declared))
                return await read_capped(response.aiter_bytes(), max_bytes, name)
        except httpx.HTTPError as exc:
            raise unreadable(name, "Discord", type(exc).__name__) from None

    async def _register(self, client: Any) -> None:
        """The built-ins, plugins' commands and skills as the bot's global commands; when
        Discord refuses them, typed commands still work (logged, not retried)."""
        import asyncio

        import discord

        extra = await asyncio.to_thread(self._extra_commands)
        try:
            await client.http.bulk_upsert_global_commands(client.application_id,
                                                          command_payloads(extra))
        except discord.HTTPException as exc:
            if exc.status >= 500 or exc.status == 429:
                raise  # the connection is retried, and the registration with it
            self.log.warning("slash commands not registered", extra={"fields": {
                "platform": self.name, "error": self._scrub(exc)}})
        self._registered = True

    def _extra_commands(self) -> list[tuple[str, str]]:
        plugins = [(name, str(getattr(command, "description", "") or name))
                   for name, command in sorted(self.service.plugin_commands().items())]
        skills = [(skill.name, skill.description)
                  for skill in self.service.runtime.container.skills().list()]
        return plugins + skills

    def _remember(self, *ids: int) -> None:
        for one in ids:
            if one:
                self._ours[one] = None
                self._ours.move_to_end(one)
        while len(self._ours) > REMEMBERED:
            self._ours.popitem(last=False)

    def _scrub(self, exc: BaseException) -> str:
        return f"{type(exc).__name__}: {exc}".replace(self.token, "<token>")


def _author_is(message: Any, user_id: int) -> bool:
    author = getattr(message, "author", None)
    return author is not None and author.id == user_id


def _split_attachments(attachments: list[Any]) -> tuple[list[Any], list[Any]]:
    """(images and other files, audio files): files go to vision, which refuses what it
    cannot read in one line."""
    audio = [a for a in attachments if (a.content_type or "").startswith("audio/")]
    return [a for a in attachments if a not in audio], audio

