"""``kind: slack``: a Slack app in Socket Mode (no public URL needed).

Two tokens: the bot token (``xoxb-``) is the platform's ``token``
(``${secret:SLACK_BOT_TOKEN}``); the app-level token (``xapp-``, scope
``connections:write``) opens the Socket Mode connection: ``settings.app_token``
(``${secret:SLACK_APP_TOKEN}``). Allowed users are Slack user ids (``U0123ABCD``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import MessagingSettings, Number
from hermes.config.sections import NonBlank

KIND = "slack"
ADAPTER = "hermes.gateway.slack.platform:SlackPlatform"
DEFAULT_API = "https://slack.com/api/"
APP_TOKEN_MISSING = ("missing: the app-level token (xapp-…, scope connections:write), by "
                     "reference: app_token: ${secret:SLACK_APP_TOKEN}, and `hermes config set "
                     "SLACK_APP_TOKEN xapp-…`")
CHECK_TIMEOUT = 5.0
"""Seconds ``hermes doctor``'s ``auth.test`` may take."""


def _api_base(url: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise PydanticCustomError("url", "not an http(s) URL; e.g. https://slack.com/api/")
    return url.rstrip("/") + "/"


def _command(name: str) -> str:
    if not re.fullmatch(r"/[a-z0-9_-]{1,31}", name):
        raise PydanticCustomError("command", "a slash command is / and 1-32 lower-case "
                                  "letters, digits, - or _; e.g. /hermes")
    return name


class Settings(MessagingSettings):
    """``kind: slack``: a Slack app talking over Socket Mode: direct messages, channels
    where it is mentioned, threads, ``/hermes`` and its App Home."""

    app_token: str = Field("", validate_default=True)
    """The app-level token (``xapp-…``, scope ``connections:write``) that opens the Socket
    Mode connection, by reference: ``${secret:SLACK_APP_TOKEN}`` (required)."""
    api_base: Annotated[NonBlank, AfterValidator(_api_base)] = DEFAULT_API
    """The Web API's address (the Socket Mode URL comes from its ``apps.connections.open``);
    another one only for a test double or a proxy."""
    command: Annotated[NonBlank, AfterValidator(_command)] = "/hermes"
    """The slash command of the app's manifest whose text is a message to the agent
    (``/hermes /new`` runs the built-in ``/new``). Any other slash command the manifest
    declares, ``/NAME text``, is run as ``/NAME text``: a built-in command or a skill."""
    reply_in_thread: bool = True
    """In channels, answer a mention in a thread under it (each thread one conversation);
    off: answer in the channel (the channel one conversation)."""
    require_mention: bool = True
    """In channels, answer only messages that mention the app, and replies in threads it
    answered in; off: every message of the channels it is in (``message.channels``)."""
    markdown: bool = True
    """Send answers as mrkdwn (Markdown converted; ``&``, ``<``, ``>`` escaped) in one
    section block; as plain text when Slack rejects the blocks."""
    typing_reaction: str = "eyes"
    """Slack has no typing indicator for apps: while a turn runs, the message it answers
    carries this reaction (scope ``reactions:write``), taken off with the answer; empty:
    none."""
    app_home: bool = True
    """Publish a short App Home tab (how to talk to the agent) when a user opens it."""
    ping_interval: Annotated[Number, Field(gt=0, le=120)] = 10.0
    """Seconds between pings on the Socket Mode connection; one silent for four pings is
    taken as lost and made again."""

    @field_validator("app_token", mode="before")
    @classmethod
    def _app_token(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise PydanticCustomError("as_written", APP_TOKEN_MISSING)
        return value


def check(token: str | None, settings: Settings) -> tuple[bool, str]:
    """``hermes doctor``: the bot token through ``auth.test`` (one cheap call); whether it
    passed, and what Slack said (standard library only: doctor imports no SDK)."""
    import json
    import urllib.error
    import urllib.request

    if not token:
        return False, "no bot token: `hermes config set SLACK_BOT_TOKEN xoxb-…`"
    request = urllib.request.Request(f"{settings.api_base}auth.test", data=b"", method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=CHECK_TIMEOUT) as response:  # noqa: S310
            answer = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, f"{settings.api_base}auth.test: {exc}"
    if not answer.get("ok"):
        return False, f"auth.test: {answer.get('error', 'refused')} — check SLACK_BOT_TOKEN"
    return True, f"bot {answer.get('user', '?')} in {answer.get('team', '?')}"
