"""The ``mattermost`` platform: a bot on a Mattermost server, over REST API v4 and the
WebSocket.

It checks its token (``GET /api/v4/users/me``), opens ``/api/v4/websocket`` (the
token given in an ``authentication_challenge``) and takes ``posted`` events. Direct
messages are answered; in channels (and group messages) only posts that mention the bot
(the server's own list of mentioned users, or ``@name`` in the text) or continue a
thread it answered in, with the mention taken out. A post in a thread is answered in
the thread (``root_id``). Mattermost's apps take a post starting with ``/`` as one of
their own commands, so the gateway's are typed after the mention: ``@bot /approve``
(in direct messages too). Files attached to a post go to the gateway as images (audio
files to be transcribed: ``hermes.gateway.voice``), downloaded only for a sender it lets
in. Answers are Markdown, which Mattermost renders
as it is; channel-wide mentions in them (``@all``, ``@channel``, ``@here``) notify
nobody. Answers over 16383 characters (a post's limit) are split at paragraphs, then
lines. The chat shows "typing" while a turn runs. Deliver to a channel with
``mattermost:CHANNEL_ID`` (a thread: ``mattermost:CHANNEL_ID:ROOT_POST_ID``).
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from pathlib import PurePath
from typing import Any

from hermes.config.platform_kinds.mattermost import Settings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.images import IncomingImage
from hermes.gateway.mattermost.client import MattermostClient
from hermes.gateway.mattermost.events import FileInfo, Post, posted
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.voice import IncomingAudio

MAX_CHARS = 16383
"""Characters a post may hold."""
REMEMBERED = 1000
"""Posts the bot made (and threads it answered in) remembered to recognise its threads."""


class MattermostPlatform(MessagingAdapter):
    """One Mattermost bot of one profile."""

    max_chars = MAX_CHARS

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, Settings)  # the schema types it by ``kind``
        self.settings = settings
        key = f"platforms.enabled.{name}.token"
        if not config.token:
            raise ConfigError("no token — make a bot account (System Console → Integrations "
                              "→ Bot Accounts) and `hermes config set MATTERMOST_TOKEN "
                              "<token>`", key=key)
        self.client = MattermostClient(settings.url, config.token, key)
        self.me = ""
        self._mention: re.Pattern[str] | None = None
        self._ours: OrderedDict[str, None] = OrderedDict()

    async def connect(self) -> None:
        await self.client.close()
        me = await self.client.me()
        self.me, username = str(me.get("id", "")), str(me.get("username", ""))
        self._mention = re.compile(rf"(?<![\w@])@{re.escape(username)}\b[:,]?", re.IGNORECASE)
        self.status.detail = f"@{username} on {self.settings.url}"

    async def listen(self) -> None:
        async for event in self.client.events():
            post = posted(event, self.me)
            if post is not None:
                await self._received(post)

    async def deliver(self, source: MessageSource, text: str) -> None:
        sent = await self.client.post(source.chat_id, text, source.thread_id)
        self._remember(str(sent.get("id", "")), source.thread_id)

    async def typing(self, source: MessageSource) -> None:
        if self.outbox.connected.is_set():
            await self.client.typing(source.chat_id, source.thread_id)

    async def disconnect(self) -> None:
        await self.client.close()

    async def _received(self, post: Post) -> None:
        text: str | None = self._without_mention(post.message)
        if not post.direct and self.settings.require_mention and not self._addressed(post):
            text = None
        if text is None:
            return
        source = MessageSource(self.name, post.channel_id, "direct" if post.direct else "group",
                               post.user_id, post.sender_name, post.root_id)
        sounds = tuple(f for f in post.files if f.mime.startswith("audio/"))
        await self.dispatch(MessageEvent(
            source, text, post.id, tuple(self._image(f) for f in post.files if f not in sounds),
            tuple(self._audio(f) for f in sounds)))

    def _addressed(self, post: Post) -> bool:
        """Whether a channel post is for the bot: it mentions the bot or continues a
        thread the bot answered in."""
        assert self._mention is not None, "connect() sets it"
        return self.me in post.mentions or bool(self._mention.search(post.message)) or \
            (bool(post.root_id) and post.root_id in self._ours)

    def _without_mention(self, text: str) -> str:
        """The text with the bot's mention taken out (Mattermost's apps keep a post that
        starts with ``/`` for their own commands: ``@bot /approve`` is how one is typed)."""
        assert self._mention is not None, "connect() sets it"
        return re.sub(r"[ \t]{2,}", " ", self._mention.sub("", text)).strip() or text

    def _audio(self, info: FileInfo) -> IncomingAudio:
        """An audio file (a voice recording), transcribed before the turn."""
        return IncomingAudio(info.name, functools.partial(self.client.file, info.id, info.name),
                             info.size, info.mime, PurePath(info.name).suffix or ".ogg")

    def _image(self, info: FileInfo) -> IncomingImage:
        return IncomingImage(info.name, functools.partial(self.client.file, info.id, info.name),
                             info.size, info.mime)

    def _remember(self, *posts: str) -> None:
        for post in posts:
            if post:
                self._ours[post] = None
                self._ours.move_to_end(post)
        while len(self._ours) > REMEMBERED:
            self._ours.popitem(last=False)
