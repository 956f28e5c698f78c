"""``kind: xmpp``: an XMPP (Jabber) account talking one to one and in MUC rooms."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import LOOPBACK_HOSTS, Integer, MessagingSettings
from hermes.config.sections import NonBlank

KIND = "xmpp"
ADAPTER = "hermes.gateway.xmpp.platform:XmppPlatform"
BARE_JID = re.compile(r"[^@/\s]+@[^@/\s]+")


def _bare_jid(jid: str) -> str:
    if not BARE_JID.fullmatch(jid):
        raise PydanticCustomError("jid", "not a bare JID; e.g. hermes@example.org")
    return jid.lower()  # JIDs ignore case; the server's are compared in lower case


def _room(room: str) -> str:
    if not BARE_JID.fullmatch(room):
        raise PydanticCustomError("room", "not a room's JID; e.g. ops@conference.example.org")
    return room.lower()


class Settings(MessagingSettings):
    """``kind: xmpp``: an XMPP account. Its password is the platform's ``token``, by
    reference: ``${secret:XMPP_PASSWORD}``; ``allowed_users`` are bare JIDs
    (``you@example.org``)."""

    jid: Annotated[NonBlank, AfterValidator(_bare_jid)]
    """The agent's account, e.g. ``hermes@example.org``."""
    host: str = ""
    """The server to connect to (empty: found from the JID's domain, by its SRV records)."""
    port: Annotated[Integer, Field(ge=1, le=65535)] = 5222
    """Its port, with ``host`` (5222 for ``starttls``; 5223 is usual for ``direct``)."""
    tls: Literal["starttls", "direct", "none"] = "starttls"
    """``starttls``: plain connection upgraded to TLS before logging in (XMPP's usual);
    ``direct``: TLS from the start (XEP-0368); ``none``: no TLS, for a loopback ``host``
    only (the password would cross the network in the clear). The server's certificate is
    always verified."""
    ca_file: str = ""
    """A PEM file of the certificate authorities to trust instead of the system's (a
    private CA); empty: the system's."""
    resource: NonBlank = "hermes"
    """The resource of the agent's connection (``hermes@example.org/hermes``)."""
    rooms: list[Annotated[NonBlank, AfterValidator(_room)]] = Field(default_factory=list)
    """MUC rooms to join, by JID (``ops@conference.example.org``); cron and answers can
    be delivered only to these rooms."""
    nick: NonBlank = "hermes"
    """The agent's nickname in rooms; a message that names it (``hermes: ...``) or replies
    to the agent is addressed to it."""
    require_mention: bool = True
    """In rooms, answer only messages that name the agent's nick or reply to it."""
    max_chars: Annotated[Integer, Field(ge=100, le=100_000)] = 8000
    """Longest message sent; longer answers are split (on paragraphs, then lines)."""
    connect_timeout: Annotated[Integer, Field(ge=1, le=300)] = 30
    """Seconds connecting and logging in may take before the attempt counts as failed."""

    @model_validator(mode="after")
    def _safe(self) -> Settings:
        if self.tls == "none" and self.host not in LOOPBACK_HOSTS:
            raise PydanticCustomError("plain_text", "tls: none would send the password to "
                                      "{host} in the clear; use starttls or direct (none is "
                                      "for a loopback host only)",
                                      {"host": self.host or "the JID's server"})
        return self


def check(token: str | None, settings: Settings) -> tuple[bool, str]:
    """``hermes doctor``: log in once (and out); whether it worked, and what the server
    said. The client is the gateway's, loaded by name like ``ADAPTER``."""
    import asyncio
    import importlib
    import logging

    if not token:
        return False, "no password: `hermes config set XMPP_PASSWORD <password>`"
    client = importlib.import_module("hermes.gateway.xmpp.client")
    result: tuple[bool, str] = asyncio.run(client.check_login(
        client.login_for(settings, token), logging.getLogger("hermes.doctor")))
    return result
