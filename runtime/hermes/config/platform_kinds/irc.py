"""``kind: irc``: the agent as an IRC client (a nick on one server, in channels and private
messages). Standard library only, like every module here."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import LOOPBACK_HOSTS, Integer, MessagingSettings, Number
from hermes.config.sections import NonBlank

KIND = "irc"
ADAPTER = "hermes.gateway.irc.platform:IrcPlatform"
NICK = re.compile(r"[A-Za-z\[\]\\`_^{|}][A-Za-z0-9\[\]\\`_^{|}-]{0,29}")
CHANNEL = re.compile(r"[#&+!][^\s,\x07:]{1,49}")


def _nick(value: str) -> str:
    if not NICK.fullmatch(value):
        raise PydanticCustomError("nick", "not an IRC nick (a letter or one of _[]{}|^` first, "
                                  "then also digits and -; 30 at most); e.g. hermes")
    return value


def _channel(value: str) -> str:
    if not CHANNEL.fullmatch(value):
        raise PydanticCustomError("channel", "{value} is not an IRC channel; e.g. #ops",
                                  {"value": repr(value)})
    return value


class Settings(MessagingSettings):
    """``kind: irc``: one nick on one IRC server. Private messages are always read (through
    ``allowed_users`` and pairing); in ``channels`` the agent answers when addressed
    (``hermes: ...``) or mentioned. IRC nicks are not proof of anyone: ``allowed_users``
    holds ``nick!user@host`` masks (``*`` and ``?`` wildcards) or services accounts
    (``$a:alice``, known where the server tags messages with the sender's account)."""

    server: NonBlank
    """The server's host name, e.g. ``irc.libera.chat``."""
    port: Annotated[Integer, Field(ge=1, le=65535)] = 6697
    """6697: TLS; 6667: plain text (``tls: false``)."""
    tls: bool = True
    """Speak TLS from the start (the server's certificate is verified); off: plain text,
    which with a password is allowed to a loopback server only."""
    ca_file: str = ""
    """A PEM file of certificate authorities to trust instead of the system's (a private
    server's own CA)."""
    nick: Annotated[NonBlank, AfterValidator(_nick)] = "hermes"
    """The agent's nick. Taken by someone else, the agent uses ``nick_``, ``nick__``, ...
    and takes its own back when it is free again."""
    username: str = ""
    """The user name (ident) part of the agent's mask (empty: the nick)."""
    realname: NonBlank = "Hermes agent"
    """What ``/whois`` shows as the agent's real name."""
    password: str | None = None
    """The SASL PLAIN password of the agent's services account, by reference:
    ``${secret:IRC_PASSWORD}``. Set, the connection fails unless the server accepts it
    (never falls back to no login)."""
    sasl_username: str = ""
    """The services account SASL logs in as (empty: the nick)."""
    server_password: str | None = None
    """The server password (``PASS``), by reference, for servers and bouncers that ask one."""
    channels: list[Annotated[NonBlank, AfterValidator(_channel)]] = Field(default_factory=list)
    """Channels to join, e.g. ``["#ops"]``."""
    require_mention: bool = True
    """In channels, answer only messages that address the agent (``hermes: ...``,
    ``hermes, ...``) or mention its nick; off: every message of an allowed sender."""
    regain_interval: Annotated[Number, Field(gt=0)] = 60.0
    """Seconds between tries to take the agent's own nick back while it uses a fallback
    (also tried at once when its holder quits or changes nick in a shared channel)."""
    ping_interval: Annotated[Number, Field(gt=0)] = 90.0
    """Seconds of silence from the server before the agent pings it; as long again without
    an answer and the connection is taken as lost (and made again)."""

    @model_validator(mode="after")
    def _safe(self) -> Settings:
        if not self.tls and (self.password or self.server_password) and \
                self.server not in LOOPBACK_HOSTS:
            raise PydanticCustomError("plain_text", "tls: false would send the password to "
                                      "{host} in the clear; use TLS (port 6697)",
                                      {"host": self.server})
        return self


def check(token: str | None, settings: Settings) -> tuple[bool, str]:
    """``hermes doctor``: connect, register (with SASL when a password is set) and quit:
    the server reachable, TLS verified, the nick and the login accepted. The client is
    the gateway's, loaded by name like ``ADAPTER``."""
    import asyncio
    import importlib
    import logging

    client = importlib.import_module("hermes.gateway.irc.client")
    result: tuple[bool, str] = asyncio.run(client.check_login(
        client.login_for(settings, f"platforms.enabled.{KIND}"),
        logging.getLogger("hermes.doctor")))
    return result
