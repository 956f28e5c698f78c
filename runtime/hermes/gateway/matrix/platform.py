"""The ``matrix`` platform: the agent's Matrix account, talking in unencrypted rooms.

It logs in with an access token (the platform's ``token``) or a password, then syncs.
Invitations from allowed users are accepted (and direct-chat invitations from anyone
while pairing is on, so a stranger can ask for a code); others are declined. Text
messages go to the gateway, edits do not (the original was answered); so do images
(``m.image``, and ``m.file`` of an image type) with their caption as one turn, downloaded
from the media repository only once the gateway let the sender in
(``hermes.gateway.images``). In rooms of more than two members only messages addressed
to the agent count (a mention, a reply to it, a thread it answered in). A message in a
thread is answered in that thread. Encrypted rooms cannot be read yet: an allowed user
writing in one is told so once (and an encrypted file is refused in one line).

Where the sync stopped is kept in ``<home>/platforms/<name>.json`` so messages sent
while the gateway was down are answered when it is back; on the very first start the
rooms' history is skipped.
"""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hermes.agent.attachments import ImageRefused
from hermes.config.platform_schema import MatrixSettings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError
from hermes.fsutil import atomic_write
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.images import IncomingImage, unreadable
from hermes.gateway.matrix.client import Credentials, MatrixAccount
from hermes.gateway.matrix.events import (
    Invite,
    Media,
    RoomMessage,
    encrypted,
    invites,
    left,
    member_counts,
    messages,
)
from hermes.gateway.messaging.adapter import MessagingAdapter
from hermes.gateway.messaging.gate import gate_for
from hermes.gateway.messaging.outbox import Rejected
from hermes.gateway.voice import IncomingAudio
from hermes.voice.audio import OGG_OPUS
from hermes.voice.base import Audio

MAX_CHARS = 16000
"""Characters per message: well inside the 64 KiB a Matrix event may take."""
TYPING_SECONDS = 6.0
REMEMBERED = 1000
"""Events sent (and threads answered) remembered to recognise replies to the agent."""
ENCRYPTED_MEDIA = ("it is an end-to-end encrypted file, which I cannot read yet; send it "
                   "unencrypted")
ENCRYPTED_ROOM = ("This room is end-to-end encrypted, which I cannot read yet. Talk to me "
                  "in an unencrypted room.")


class MatrixPlatform(MessagingAdapter):
    """One Matrix account of one profile."""

    max_chars = MAX_CHARS
    voice_format = OGG_OPUS

    def __init__(self, name: str, config: PlatformConfig, service: Any, listeners: Any):
        super().__init__(name, config, service, listeners)
        settings = config.settings
        assert isinstance(settings, MatrixSettings)  # the schema types it by ``kind``
        self.settings = settings
        key = f"platforms.enabled.{name}"
        if not config.token and not settings.password:
            raise ConfigError("no credentials — give an access token (token: "
                              "${secret:MATRIX_ACCESS_TOKEN}, then `hermes config set "
                              "MATRIX_ACCESS_TOKEN <token>`) or settings.user_id and "
                              "settings.password", key=f"{key}.token")
        if settings.password and not settings.user_id:
            raise ConfigError("a password login needs the account: set settings.user_id, "
                              "e.g. @hermes:example.org", key=f"{key}.settings.user_id")
        self.account = MatrixAccount(Credentials(
            settings.homeserver, config.token or None, settings.user_id,
            settings.password or None, settings.device_id, key), settings.sync_timeout)
        self.gate = gate_for(name, config, service.home, self.send, self.log)
        self.state_file = Path(service.home.path) / "platforms" / f"{name}.json"
        self._since: str | None = None
        self._mention: re.Pattern[str] | None = None
        self._members: dict[str, int] = {}
        self._ours: OrderedDict[str, None] = OrderedDict()
        """Events the agent sent and thread roots it answered in."""
        self._told_encrypted: set[str] = set()

    async def connect(self) -> None:
        me = await self.account.login()
        self._mention = _mention_pattern(me, await self.account.display_name())
        if self._since is None:
            self._since = _load_since(self.state_file, me)
        if self._since is None:  # first start: the rooms' history is not for answering
            await self._take(await self.account.sync(None, 0), history=True)
        self.status.detail = f"{me} on {self.settings.homeserver}"

    async def listen(self) -> None:
        while True:
            await self._take(await self.account.sync(self._since, self.settings.sync_timeout))

    async def deliver(self, source: MessageSource, text: str) -> None:
        await self._post(source, {"msgtype": "m.text", "body": text, "m.mentions": {}})

    async def deliver_voice(self, source: MessageSource, sound: Audio) -> None:
        """A voice message: the audio uploaded, then an ``m.audio`` event marked as voice
        (MSC3245), which Element shows as one."""
        name = f"voice{sound.suffix}"
        url = await self.account.upload(sound.data, sound.mime, name)
        await self._post(source, {"msgtype": "m.audio", "body": "Voice message",
                                  "filename": name, "url": url, "m.mentions": {},
                                  "info": {"mimetype": sound.mime, "size": len(sound.data)},
                                  "org.matrix.msc3245.voice": {}})

    async def _post(self, source: MessageSource, content: dict[str, Any]) -> None:
        room, thread = source.chat_id, source.thread_id
        if thread:  # clients without threads show it as a reply to the root
            content["m.relates_to"] = {"rel_type": "m.thread", "event_id": thread,
                                       "is_falling_back": True,
                                       "m.in_reply_to": {"event_id": thread}}
        event_id = await self.account.send(room, content)
        self._remember(event_id, thread)

    async def typing(self, source: MessageSource) -> None:
        if self.outbox.connected.is_set():
            await self.account.typing(source.chat_id, TYPING_SECONDS)

    async def disconnect(self) -> None:
        await self.account.close()

    async def _take(self, sync: dict[str, Any], *, history: bool = False) -> None:
        """Act on one sync response, then remember where it ended."""
        me = self.account.user_id
        self._members.update(member_counts(sync))
        for room_id in left(sync):
            self._members.pop(room_id, None)
        received = [] if history else messages(sync, me)
        # before anything is acted on: a lost connection here raises, and the same sync is
        # taken again after the reconnect, not answered as if every room were a group
        for room_id in dict.fromkeys(message.room_id for message in received):
            await self._member_count(room_id)
        for invite in invites(sync, me):
            await self._invited(invite)
        if not history:
            for room_id, sender in encrypted(sync, me):
                await self._encrypted(room_id, sender)
            for message in received:
                await self._received(message)
        self._save(str(sync.get("next_batch") or self._since or ""))

    async def _invited(self, invite: Invite) -> None:
        fields = {"platform": self.name, "room": invite.room_id, "inviter": invite.inviter}
        welcome = self.gate.allows(invite.inviter) or (invite.direct and self.settings.pairing)
        try:
            if welcome:
                await self.account.join(invite.room_id)
            else:
                await self.account.leave(invite.room_id)
        except Rejected as exc:  # a lost connection raises on: the sync is taken again
            self.log.warning("invite not answered", extra={"fields": fields | {
                "error": str(exc)}})
            return
        self.log.info("invite accepted" if welcome else "invite declined: inviter not allowed",
                      extra={"fields": fields})

    async def _encrypted(self, room_id: str, sender: str) -> None:
        self.log.warning("encrypted message ignored", extra={"fields": {
            "platform": self.name, "room": room_id, "sender": sender}})
        if room_id not in self._told_encrypted and self.gate.allows(sender):
            self._told_encrypted.add(room_id)
            await self.send(MessageSource(self.name, room_id, "group", sender), ENCRYPTED_ROOM)

    async def _received(self, message: RoomMessage) -> None:
        direct = await self._member_count(message.room_id) <= 2
        text: str | None = message.body
        if not direct and self.settings.require_mention:
            text = self._addressed(message)
        if text is None:
            return
        source = MessageSource(self.name, message.room_id, "direct" if direct else "group",
                               message.sender, message.sender, message.thread_id)
        await self.dispatch(MessageEvent(
            source, text, message.event_id,
            tuple(self._image(media) for media in message.media if not media.audio),
            tuple(self._audio(media) for media in message.media if media.audio)))

    def _audio(self, media: Media) -> IncomingAudio:
        """A voice message (or audio file) to download once the sender is let in."""
        suffix = "." + media.name.rpartition(".")[2] if "." in media.name else ".ogg"
        return IncomingAudio(media.name, functools.partial(self._download, media), media.size,
                             media.mime, suffix)

    def _image(self, media: Media) -> IncomingImage:
        """An image (or file) to download once the sender is let in."""
        return IncomingImage(media.name, functools.partial(self._download, media), media.size,
                             media.mime)

    async def _download(self, media: Media, max_bytes: int) -> bytes:
        if media.encrypted:
            raise ImageRefused(f"{media.name}: {ENCRYPTED_MEDIA}")
        if not media.url:
            raise unreadable(media.name, "the homeserver", "no mxc:// URL")
        return await self.account.download(media.url, media.name, max_bytes)

    def _addressed(self, message: RoomMessage) -> str | None:
        """The text of a room message for the agent (its mention taken out), else None."""
        assert self._mention is not None, "connect() sets it"
        to_me = self.account.user_id in message.mentions or \
            bool(self._mention.search(message.body)) or \
            self.account.user_id in message.formatted or \
            any(event and event in self._ours for event in (message.reply_to,
                                                            message.thread_id))
        if not to_me:
            return None
        text = re.sub(r"[ \t]{2,}", " ", self._mention.sub("", message.body)).strip(" ,:")
        return text or message.body

    async def _member_count(self, room_id: str) -> int:
        if room_id not in self._members:
            try:
                self._members[room_id] = await self.account.member_count(room_id)
            except Rejected:  # not ours to count: a room, where only mentions are answered
                return 3
        return self._members[room_id]

    def _remember(self, *events: str) -> None:
        for event in events:
            if event:
                self._ours[event] = None
                self._ours.move_to_end(event)
        while len(self._ours) > REMEMBERED:
            self._ours.popitem(last=False)

    def _save(self, since: str) -> None:
        if since and since != self._since:
            self._since = since
            atomic_write(self.state_file, json.dumps({"user_id": self.account.user_id,
                                                      "since": since}) + "\n", mode=0o600)


def _mention_pattern(user_id: str, display_name: str) -> re.Pattern[str]:
    """The agent's user id, ``@localpart`` or display name as a word."""
    localpart = user_id[1:].split(":", 1)[0]
    names = sorted({user_id, f"@{localpart}", localpart, display_name} - {""}, key=len,
                   reverse=True)
    words = "|".join(re.escape(name) for name in names)
    # "hermes: hi" is a mention, "@hermes:elsewhere.org" (someone else) is not
    return re.compile(rf"(?<![\w@])(?:{words})(?!\w|:\S)[:,]?", re.IGNORECASE)


def _load_since(path: Path, user_id: str) -> str | None:
    """Where the last sync of ``user_id`` ended (None: never synced, or another account)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("user_id") != user_id:
        return None
    since = data.get("since")
    return since if isinstance(since, str) and since else None
