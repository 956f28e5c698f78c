"""What a Matrix ``/sync`` response holds for the agent, read from its JSON.

Plain functions over the response: invites addressed to the agent, text messages,
images (``m.image``, and files: ``m.file``) and audio (``m.audio``) in joined rooms
(edits, notices, redactions and the agent's own messages left out; the thread a
message belongs to and the event it replies to kept), encrypted events, and room member
counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
MEDIA = ("m.image", "m.file", "m.audio")
MXC = re.compile(r"mxc://[A-Za-z0-9.:\[\]-]+/[A-Za-z0-9_-]+")
"""A content URI as the spec allows it: nothing else is ever put in a download URL."""


@dataclass(frozen=True)
class Media:
    """An image or file a message carries (in the homeserver's media repository)."""

    url: str
    """Its ``mxc://`` URI; empty when it cannot be fetched (encrypted, or malformed)."""
    name: str
    mime: str = ""
    """The type the sender's client declares (``info.mimetype``), lower case."""
    size: int | None = None
    """The size it declares (``info.size``)."""
    encrypted: bool = False
    """Sent as an encrypted file (``file`` instead of ``url``): not readable here."""
    audio: bool = False
    """An ``m.audio`` message (a voice message): transcribed, not looked at."""


@dataclass(frozen=True)
class Invite:
    """An invitation of the agent into a room."""

    room_id: str
    inviter: str
    direct: bool
    """The inviter marked it a direct chat."""


@dataclass(frozen=True)
class RoomMessage:
    """A text message someone wrote in a room the agent is in."""

    room_id: str
    event_id: str
    sender: str
    body: str
    formatted: str = ""
    """The HTML body, where the client sent one (mentions are links in it)."""
    thread_id: str = ""
    """The thread's root event, when the message is in a thread."""
    reply_to: str = ""
    """The event it answers, when it is a reply (not merely a thread's fallback)."""
    mentions: tuple[str, ...] = ()
    """User ids the sender's client says it mentions (``m.mentions``)."""
    media: tuple[Media, ...] = ()
    """The image or file of an ``m.image``/``m.file`` message (``body`` is its caption)."""


def invites(sync: JSON, me: str) -> list[Invite]:
    """Invitations of ``me`` in the response."""
    found = []
    for room_id, room in _section(sync, "invite").items():
        for event in room.get("invite_state", {}).get("events", []):
            content = event.get("content") or {}
            if event.get("type") == "m.room.member" and event.get("state_key") == me \
                    and content.get("membership") == "invite":
                found.append(Invite(room_id, str(event.get("sender", "")),
                                    bool(content.get("is_direct"))))
    return found


def messages(sync: JSON, me: str) -> list[RoomMessage]:
    """New text messages of others in joined rooms, in order."""
    return [message for room_id, event in _timeline(sync)
            if (message := _message(room_id, event, me)) is not None]


def encrypted(sync: JSON, me: str) -> list[tuple[str, str]]:
    """``(room, sender)`` of encrypted messages from others (they cannot be read yet)."""
    return [(room_id, str(event.get("sender", ""))) for room_id, event in _timeline(sync)
            if event.get("type") == "m.room.encrypted" and event.get("sender") != me]


def member_counts(sync: JSON) -> dict[str, int]:
    """Joined member counts the response reports (only for rooms where they changed)."""
    counts = {}
    for room_id, room in _section(sync, "join").items():
        count = (room.get("summary") or {}).get("m.joined_member_count")
        if isinstance(count, int):
            counts[room_id] = count
    return counts


def left(sync: JSON) -> list[str]:
    """Rooms the agent left or was removed from."""
    return list(_section(sync, "leave"))


def _section(sync: JSON, name: str) -> dict[str, JSON]:
    rooms = sync.get("rooms") or {}
    section = rooms.get(name) or {}
    return section if isinstance(section, dict) else {}


def _timeline(sync: JSON) -> Iterator[tuple[str, JSON]]:
    for room_id, room in _section(sync, "join").items():
        for event in (room.get("timeline") or {}).get("events") or []:
            if isinstance(event, dict):
                yield room_id, event


def _message(room_id: str, event: JSON, me: str) -> RoomMessage | None:
    content = event.get("content") or {}
    if event.get("type") != "m.room.message" or event.get("sender") == me \
            or content.get("msgtype") not in ("m.text", *MEDIA) \
            or not isinstance(content.get("body"), str):
        return None  # notices are other bots' words; an empty content is a redaction
    relation = content.get("m.relates_to") or {}
    if relation.get("rel_type") == "m.replace" or "m.new_content" in content:
        return None  # an edit: the original was answered
    thread = str(relation.get("event_id", "")) if relation.get("rel_type") == "m.thread" else ""
    reply_to = "" if relation.get("is_falling_back") else \
        str((relation.get("m.in_reply_to") or {}).get("event_id", ""))
    body = _without_reply_fallback(content["body"]) if reply_to else content["body"]
    media = _media(content)
    if media:
        body = _caption(content)
    mentioned = (content.get("m.mentions") or {}).get("user_ids") or []
    return RoomMessage(room_id, str(event.get("event_id", "")), str(event.get("sender", "")),
                       body, str(content.get("formatted_body", "")), thread, reply_to,
                       tuple(str(user) for user in mentioned), media)


def _media(content: JSON) -> tuple[Media, ...]:
    """The image or file of a media message; none for text."""
    if content.get("msgtype") not in MEDIA:
        return ()
    info = content.get("info")
    info = info if isinstance(info, dict) else {}
    name = str(content.get("filename") or content.get("body") or "image")[:200]
    url = content.get("url")
    size = info.get("size")
    return (Media(url if isinstance(url, str) and MXC.fullmatch(url) else "", name,
                  str(info.get("mimetype") or "").lower(),
                  size if isinstance(size, int) and not isinstance(size, bool) else None,
                  isinstance(content.get("file"), dict), content.get("msgtype") == "m.audio"),)


def _caption(content: JSON) -> str:
    """A media message's caption: its body when a ``filename`` names the file apart
    (Matrix 1.10), else none (the body is the file's name); a voice message (MSC3245,
    Element's) has none: its body is a label ("Voice message")."""
    if "org.matrix.msc3245.voice" in content:
        return ""
    filename = content.get("filename")
    body = str(content["body"])
    return body if isinstance(filename, str) and filename and body != filename else ""


def _without_reply_fallback(body: str) -> str:
    """Older clients quote the message replied to (``> <@user> text``) above the answer."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> <"):
        return body
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return re.sub(r"^\n+", "", "\n".join(lines))
