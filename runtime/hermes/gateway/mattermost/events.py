"""What a Mattermost WebSocket ``posted`` event holds for the bot, read from its JSON.

The envelope is ``{"event": "posted", "data": {"post": "<the post as a JSON string>",
"channel_type": "D" | "G" | "O" | "P", "mentions": "<a JSON list of user ids>", ...},
"broadcast": {...}, "seq": N}``. The mentions are the server's own reading of the post
(the users it notifies), so they cannot be forged by writing text.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class FileInfo:
    """A file attached to a post (in ``metadata.files``)."""

    id: str
    name: str
    mime: str = ""
    size: int | None = None


@dataclass(frozen=True)
class Post:
    """A post someone wrote in a channel the bot is in."""

    id: str
    channel_id: str
    user_id: str
    message: str
    direct: bool
    """A direct message (channel type ``D``)."""
    root_id: str = ""
    """The thread's first post, when the post is a reply in a thread."""
    mentions: tuple[str, ...] = ()
    """User ids the server says the post mentions."""
    sender_name: str = ""
    files: tuple[FileInfo, ...] = ()


def posted(event: JSON, me: str) -> Post | None:
    """The post of a ``posted`` event from someone else; None for anything else (other
    events, the bot's own posts, system messages such as joins)."""
    if event.get("event") != "posted":
        return None
    data = event.get("data") or {}
    post = _json(data.get("post"))
    if not isinstance(post, dict) or post.get("user_id") in (None, "", me) \
            or post.get("type") or not post.get("channel_id"):
        return None
    mentions = _json(data.get("mentions"))
    return Post(str(post.get("id", "")), str(post["channel_id"]), str(post["user_id"]),
                str(post.get("message") or ""), data.get("channel_type") == "D",
                str(post.get("root_id") or ""),
                tuple(str(m) for m in mentions) if isinstance(mentions, list) else (),
                str(data.get("sender_name") or "").lstrip("@"), _files(post))


def _files(post: JSON) -> tuple[FileInfo, ...]:
    metadata = post.get("metadata")
    files = metadata.get("files") if isinstance(metadata, dict) else None
    if not isinstance(files, list):
        return ()
    return tuple(FileInfo(str(f.get("id", "")), str(f.get("name") or "file")[:200],
                          str(f.get("mime_type") or "").lower(),
                          f["size"] if isinstance(f.get("size"), int) else None)
                 for f in files if isinstance(f, dict) and f.get("id"))


def _json(value: Any) -> Any:
    """A field Mattermost sends as a JSON string, decoded (None when it is not JSON)."""
    if not isinstance(value, str):
        return value
    with contextlib.suppress(ValueError):
        return json.loads(value)
    return None
