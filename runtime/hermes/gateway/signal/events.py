"""What a signal-cli ``receive`` event holds for the agent, read from its JSON.

``{"envelope": {"sourceNumber", "sourceUuid", "sourceName", "timestamp", "dataMessage":
{"message", "groupInfo": {"groupId"}, "mentions": [{"number", "uuid", "start",
"length"}], "attachments": [{"id", "contentType", "filename", "size"}], "quote":
{"authorNumber", "authorUuid"}}}, "account": "+..."}``. A mention is a U+FFFC in the
text with its person beside it; receipts, typing, edits and the account's own messages
from its other devices (``syncMessage``) carry no ``dataMessage`` and are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
PLACEHOLDER = "\ufffc"
UNNAMED = "attachment"
"""The name of an attachment sent without a file name (a voice note)."""


@dataclass(frozen=True)
class Attachment:
    id: str
    name: str
    mime: str = ""
    size: int | None = None


@dataclass(frozen=True)
class SignalMessage:
    """A message someone sent the agent, directly or in a group."""

    number: str
    """The sender's phone number ("" when they hide it)."""
    uuid: str
    """The sender's account id (ACI)."""
    name: str
    text: str
    """The text, each mention written as ``@number`` (or ``@uuid``); the agent's own
    mentions taken out."""
    group: str = ""
    """The group's id, for a group message."""
    mentioned: bool = False
    """The agent is mentioned, or quoted (the message replies to it)."""
    timestamp: int = 0
    attachments: tuple[Attachment, ...] = ()


def received(event: JSON, me: str) -> SignalMessage | None:
    """The message of one event; None for anything else and for the agent's own."""
    envelope = event.get("envelope") or {}
    message = envelope.get("dataMessage") if isinstance(envelope, dict) else None
    number = str(envelope.get("sourceNumber") or "") if isinstance(envelope, dict) else ""
    uuid = str(envelope.get("sourceUuid") or "") if isinstance(envelope, dict) else ""
    if not isinstance(message, dict) or not (number or uuid) or number == me:
        return None
    text, mentioned = _text(message, me)
    quote = message.get("quote") or {}
    mentioned = mentioned or (isinstance(quote, dict) and me in (quote.get("authorNumber"),
                                                                 quote.get("author")))
    group = (message.get("groupInfo") or {}).get("groupId") or ""
    attachments = _attachments(message)
    if not text.strip() and not attachments:
        return None  # a profile key update, a reaction
    return SignalMessage(number, uuid, str(envelope.get("sourceName") or ""), text,
                         str(group), mentioned, int(envelope.get("timestamp") or 0),
                         attachments)


def _text(message: JSON, me: str) -> tuple[str, bool]:
    """The text with each mention written out (the agent's removed), and whether the
    agent was mentioned."""
    text = str(message.get("message") or "")
    mentioned = False
    mentions = [m for m in message.get("mentions") or [] if isinstance(m, dict)]
    for mention in sorted(mentions, key=lambda m: -int(m.get("start") or 0)):
        start, length = int(mention.get("start") or 0), int(mention.get("length") or 1)
        if text[start:start + length] != PLACEHOLDER * length:
            continue
        who = str(mention.get("number") or mention.get("uuid") or "someone")
        mentioned = mentioned or who == me
        text = text[:start] + ("" if who == me else f"@{who}") + text[start + length:]
    return re.sub(r"[ \t]{2,}", " ", text).strip(" ,:") if mentioned else text, mentioned


def _attachments(message: JSON) -> tuple[Attachment, ...]:
    found = []
    for item in message.get("attachments") or []:
        if isinstance(item, dict) and item.get("id"):
            size = item.get("size")
            found.append(Attachment(str(item["id"]),
                                    str(item.get("filename") or UNNAMED)[:200],
                                    str(item.get("contentType") or "").lower(),
                                    size if isinstance(size, int) else None))
    return tuple(found)
