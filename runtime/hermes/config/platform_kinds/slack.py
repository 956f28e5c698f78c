"""``kind: slack``: a Slack app in Socket Mode (no public URL needed), or on the Events
API (Slack posts to the gateway's HTTP listener).

The bot token (``xoxb-``) is the platform's ``token`` (``${secret:SLACK_BOT_TOKEN}``). In
Socket Mode the app-level token (``xapp-``, scope ``connections:write``) opens the
connection: ``settings.app_token`` (``${secret:SLACK_APP_TOKEN}``); on the Events API the
signing secret checks each request: ``settings.signing_secret``. Allowed users are Slack
user ids (``U0123ABCD``).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import ListenerSettings, MessagingSettings, Number
from hermes.config.sections import NonBlank

KIND = "slack"
ADAPTER = "hermes.gateway.slack.platform:SlackPlatform"
DEFAULT_API = "https://slack.com/api/"
APP_TOKEN_MISSING = ("app_token: missing — Socket Mode needs the app-level token (xapp-…, "
                     "scope connections:write), by reference: app_token: "
                     "${secret:SLACK_APP_TOKEN}, and `hermes config set SLACK_APP_TOKEN xapp-…`")
SIGNING_SECRET_MISSING = ("signing_secret: missing — the Events API needs the app's signing "
                          "secret, by reference: signing_secret: ${secret:SLACK_SIGNING_SECRET}, "
                          "and `hermes config set SLACK_SIGNING_SECRET …`")
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


class Settings(MessagingSettings, ListenerSettings):
    """``kind: slack``: a Slack app: direct messages, channels where it is mentioned,
    threads, ``/hermes`` and its App Home, over Socket Mode or the Events API. ``host`` and
    ``port`` are the gateway's HTTP listener the Events API posts to
    (``/slack/<platform name>/``); Socket Mode uses neither."""

    mode: Literal["socket", "events"] = "socket"
    """``socket``: the app opens a WebSocket to Slack (no public URL); ``events``: Slack
    posts events, commands and clicks to ``https://<your host>/slack/<name>/`` (set it as
    the Request URL of Event Subscriptions, Interactivity and the slash command)."""
    app_token: str = ""
    """The app-level token (``xapp-…``, scope ``connections:write``) that opens the Socket
    Mode connection, by reference: ``${secret:SLACK_APP_TOKEN}`` (required in Socket
    Mode)."""
    signing_secret: str = ""
    """The app's signing secret (Basic Information → App Credentials), by reference:
    ``${secret:SLACK_SIGNING_SECRET}`` (required with the Events API: requests without its
    signature, or older than five minutes, are refused)."""
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

    max_body_bytes: Annotated[int, Field(ge=1)] = 1024 * 1024
    """Largest Events API request, counted as it arrives; past it 413."""

    @model_validator(mode="after")
    def _credentials(self) -> Settings:
        if self.mode == "socket" and not self.app_token.strip():
            raise PydanticCustomError("as_written", APP_TOKEN_MISSING)
        if self.mode == "events" and not self.signing_secret.strip():
            raise PydanticCustomError("as_written", SIGNING_SECRET_MISSING)
        return self


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
