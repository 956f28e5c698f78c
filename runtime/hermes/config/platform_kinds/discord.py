"""``kind: discord``: a Discord bot (discord.py) talking in direct messages, server channels
and threads. Its token is the platform's ``token``, by reference:
``${secret:DISCORD_BOT_TOKEN}``; ``allowed_users`` are Discord user ids (numbers)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import MessagingSettings

KIND = "discord"
ADAPTER = "hermes.gateway.discord.platform:DiscordPlatform"
DEFAULT_API_BASE = "https://discord.com/api/v10"


def _api_base(url: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise PydanticCustomError("url", "not an http(s) URL; e.g. " + DEFAULT_API_BASE)
    return url.rstrip("/")


def _snowflakes(value: object) -> object:
    """Ids as strings (YAML reads them as numbers; ``a,b`` is a list), each all digits."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list):
        return value
    ids = [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    for one in ids:
        if not isinstance(one, str) or not one.isdigit():
            raise PydanticCustomError("snowflake", "not a Discord id (a number: turn on "
                                      "Developer Mode, then right-click → Copy ID)")
    return ids


Snowflakes = Annotated[list[str], BeforeValidator(_snowflakes)]


class Settings(MessagingSettings):
    """``kind: discord``: a bot of a Discord application. It answers every direct message
    from an allowed (or paired) user; in server channels only messages that mention it,
    reply to it, or are in a thread it answered in. Built-in commands and skills are the
    bot's slash commands."""

    api_base: Annotated[str, AfterValidator(_api_base)] = DEFAULT_API_BASE
    """Discord's REST API (v10). Another address (a proxy, or a test double) is asked for
    its gateway too (``GET /gateway/bot``)."""
    allowed_channels: Snowflakes = Field(default_factory=list)
    """Server channels the bot answers in (ids; a thread counts as its parent channel);
    empty: every channel it can read. Direct messages are not affected."""
    allowed_roles: Snowflakes = Field(default_factory=list)
    """In server channels, answer only members holding one of these roles (ids); empty:
    any member. Senders must still be allowed users or paired."""
    slash_commands: bool = True
    """Register the built-in commands (``/new``, ``/approve``, ...) and the profile's
    skills as the bot's slash commands when it connects."""


def check(token: str | None, settings: Settings) -> tuple[bool, str]:
    """``hermes doctor``: the bot token, by one ``GET /users/@me`` (standard library, a
    short timeout; the token is never shown)."""
    import json
    import urllib.error
    import urllib.request

    if not token:
        return False, "no bot token: `hermes config set DISCORD_BOT_TOKEN <token>`"
    request = urllib.request.Request(f"{settings.api_base}/users/@me", headers={
        "Authorization": f"Bot {token}", "User-Agent": "DiscordBot (hermes doctor, 1)"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - http(s)
            name = json.loads(response.read()).get("username", "?")
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            return False, (f"{settings.api_base} refused the bot token (401): set the right "
                           "one: `hermes config set DISCORD_BOT_TOKEN <token>`")
        return False, f"{settings.api_base}: HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"{settings.api_base}: {reason}".replace(token, "<token>")
    return True, f"bot @{name} via {settings.api_base}"
