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
CHECK_TIMEOUT = 5.0
"""Seconds ``hermes doctor`` waits for the server."""


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


def check(token: str | None, settings: Settings) -> tuple[bool, str]:
    """``hermes doctor``: the token through ``GET /api/v4/users/me`` (one cheap call);
    whether it passed, and who it is (standard library only)."""
    import json
    import urllib.error
    import urllib.request

    if not token:
        return False, "no token: `hermes config set MATTERMOST_TOKEN <token>`"
    url = f"{settings.url}/api/v4/users/me"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}",
                                                   "User-Agent": "hermes-doctor"})
    try:
        with urllib.request.urlopen(request, timeout=CHECK_TIMEOUT) as response:  # noqa: S310
            me = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return False, f"{url}: HTTP {exc.code} — check the token (MATTERMOST_TOKEN)"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, f"{url}: {getattr(exc, 'reason', exc)}"
    return True, f"@{me.get('username', '?')} on {settings.url}"
