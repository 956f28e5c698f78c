"""Slack's payloads (Events API events, slash commands, button clicks) as ``MessageEvent``s.

Pure functions of the payload and what the adapter knows (its bot user id, the threads it
answered in); the adapter decides where they go. A direct message (``channel_type: im``)
is a ``direct`` chat, everything else a ``group``. In a channel each mention starts a
thread (``reply_in_thread``): the thread (``thread_ts``) is the conversation.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from hermes.gateway.base import MessageEvent, MessageSource

JSON = dict[str, Any]
APPROVAL_ACTION = "hermes_approval"
"""The ``action_id`` (``hermes_approval_<value>``) of the approve/deny buttons; their
``value`` is the answer."""
ANSWERS = {"once": "/approve", "session": "/approve session", "always": "/approve always",
           "deny": "/deny"}


@dataclass(frozen=True)
class Options:
    """What the adapter's settings and state decide about a payload."""

    platform: str
    bot_user: str
    reply_in_thread: bool = True
    require_mention: bool = True


def message(event: JSON, options: Options, answered: Container[tuple[str, str]]
            ) -> MessageEvent | None:
    """A ``message`` event: every direct message; in channels, with ``require_mention``,
    only replies in threads the app answered in that do not mention it (the mention comes
    as ``app_mention``), else every message."""
    if event.get("bot_id") or event.get("subtype") not in (None, "file_share") \
            or not event.get("user") or event.get("user") == options.bot_user:
        return None
    if event.get("channel_type") == "im":
        return _event(event, options, "direct", str(event.get("text") or ""))
    text = str(event.get("text") or "")
    mentioned = f"<@{options.bot_user}>" in text
    if options.require_mention:
        thread = str(event.get("thread_ts") or "")
        if mentioned or not thread or (str(event.get("channel")), thread) not in answered:
            return None
    return _event(event, options, "group", _without_mention(text, options.bot_user))


def mention(event: JSON, options: Options) -> MessageEvent | None:
    """An ``app_mention`` (channels only), the mention taken out; None when
    ``require_mention`` is off (``message`` events carry them then)."""
    if not options.require_mention or not event.get("user") or event.get("bot_id"):
        return None
    text = _without_mention(str(event.get("text") or ""), options.bot_user)
    return _event(event, options, "group", text)


def command(payload: JSON, options: Options, main: str) -> MessageEvent:
    """A slash command: ``main`` (``/hermes``) carries a message, any other is itself one
    (``/deploy-site prod``). Its answer goes to the channel it was typed in."""
    name, text = str(payload.get("command") or main), str(payload.get("text") or "").strip()
    said = (text or "/help") if name == main else f"{name} {text}".strip()
    channel = str(payload.get("channel_id") or "")
    source = MessageSource(options.platform, channel, _kind(channel),
                           str(payload.get("user_id") or ""), str(payload.get("user_name") or ""))
    return MessageEvent(source, said, str(payload.get("trigger_id") or ""))


def button(payload: JSON, options: Options) -> MessageEvent | None:
    """A click on an approve/deny button, as the ``/approve`` or ``/deny`` it stands for,
    from the clicking user in the question's chat and thread."""
    actions = [a for a in payload.get("actions") or ()
               if str(a.get("action_id")).startswith(APPROVAL_ACTION)]
    answer = ANSWERS.get(str(actions[0].get("value"))) if actions else None
    channel = str((payload.get("channel") or {}).get("id") or
                  (payload.get("container") or {}).get("channel_id") or "")
    user = payload.get("user") or {}
    if answer is None or not channel or not user.get("id"):
        return None
    asked = payload.get("message") or {}
    source = MessageSource(options.platform, channel, _kind(channel), str(user["id"]),
                           str(user.get("username") or user.get("name") or ""),
                           str(asked.get("thread_ts") or ""))
    return MessageEvent(source, answer, str(asked.get("ts") or ""))


def audio_files(event: JSON) -> list[JSON]:
    """The audio files a message carries (voice clips: ``subtype: slack_audio``)."""
    return [f for f in event.get("files") or () if isinstance(f, dict) and (
        str(f.get("mimetype", "")).startswith("audio/") or f.get("subtype") == "slack_audio")
        and (f.get("url_private_download") or f.get("url_private"))]


def _event(event: JSON, options: Options, kind: str, text: str) -> MessageEvent:
    channel, ts = str(event.get("channel") or ""), str(event.get("ts") or "")
    thread = str(event.get("thread_ts") or "")
    if not thread and kind == "group" and options.reply_in_thread:
        thread = ts  # the answer starts a thread under the message
    source = MessageSource(options.platform, channel, kind,  # type: ignore[arg-type]
                           str(event.get("user") or ""), "", thread)
    return MessageEvent(source, text, ts)


def _kind(channel: str) -> Any:
    return "direct" if channel.startswith("D") else "group"


def _without_mention(text: str, bot_user: str) -> str:
    return re.sub(rf"<@{re.escape(bot_user)}(\|[^>]*)?>:?", "", text).strip() or text
