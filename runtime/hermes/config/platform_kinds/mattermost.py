"""``kind: mattermost``: a Mattermost bot over the server's REST API (v4) and WebSocket."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import MessagingSettings
from hermes.config.sections import NonBlank

KIND = "mattermost"
ADAPTER = "hermes.gateway.mattermost.platform:MattermostPlatform"


def _server_url(url: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise PydanticCustomError("url", "not an http(s) URL; e.g. https://chat.example.org")
    return url.rstrip("/")


class Settings(MessagingSettings):
    """``kind: mattermost``: a bot account (or a user's personal access token) on a
    Mattermost server. Its token is the platform's ``token``, by reference:
    ``${secret:MATTERMOST_TOKEN}``. ``allowed_users`` are Mattermost user ids (26
    characters; a username can be changed by its owner, an id cannot)."""

    url: Annotated[NonBlank, AfterValidator(_server_url)]
    """The server, e.g. ``https://chat.example.org`` (the API is under ``/api/v4``)."""
    require_mention: bool = True
    """In channels (and group messages), answer only posts that mention the bot
    (``@name``) or continue a thread it answered in; direct messages are always answered."""
