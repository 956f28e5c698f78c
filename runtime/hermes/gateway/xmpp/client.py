"""The agent's XMPP connection (slixmpp): log in once over verified TLS, join rooms, send.

``XmppAccount.login`` makes one connection attempt and waits for its outcome: logged in
(the session started), refused (``AccessDenied``: the password, or no login method the
server offers is safe here), or failed (``ConnectionError``: unreachable, the
certificate not trusted, too slow). slixmpp's own reconnection is never used: the
messaging base's ``Connection`` reconnects with backoff. Stanzas arriving while logged in
go to ``handlers`` (slixmpp event name -> callback); the loss of the connection to
``on_lost``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.gateway.messaging.connection import AccessDenied

if TYPE_CHECKING:  # the kind's module is loaded by platform_schema, which it imports
    from hermes.config.platform_kinds.xmpp import Settings

PLUGINS = ("xep_0030", "xep_0004", "xep_0045", "xep_0066", "xep_0085", "xep_0199",
           "xep_0203", "xep_0461")
"""Service discovery, forms, rooms, attachment links, chat states, ping, delays, replies."""
KEEPALIVE = 60
"""Seconds between pings that find a dead connection."""
JOIN_TIMEOUT = 30.0


@dataclass(frozen=True)
class Login:
    """Where and how to log in."""

    jid: str
    password: str
    resource: str
    host: str
    port: int
    tls: str
    ca_file: str
    timeout: float


def login_for(settings: Settings, password: str) -> Login:
    """How ``settings`` log in with ``password``."""
    return Login(settings.jid, password, settings.resource, settings.host, settings.port,
                 settings.tls, settings.ca_file, float(settings.connect_timeout))


class XmppAccount:
    """One slixmpp client at a time, made anew by each ``login``."""

    def __init__(self, login: Login, log: logging.Logger,
                 handlers: dict[str, Callable[[Any], None]], on_lost: Callable[[str], None]):
        self.login_info = login
        self.log = log
        self.handlers = handlers
        self.on_lost = on_lost
        self.client: Any = None

    @property
    def connected(self) -> bool:
        return self.client is not None and self.client.transport is not None

    @property
    def full_jid(self) -> str:
        return str(self.client.boundjid) if self.client is not None else ""

    async def login(self, *, announce: bool = True) -> str:
        """Connect and log in (and with ``announce``, show the agent online); the bound
        JID. ``AccessDenied`` or ``ConnectionError``."""
        await self.close()
        client = self._make_client()
        outcome: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        _watch_login(client, outcome, self.login_info)
        info = self.login_info
        client.connect(info.host or None, info.port if info.host else None)
        try:
            await asyncio.wait_for(asyncio.shield(outcome), info.timeout)
        except (TimeoutError, AccessDenied, ConnectionError) as exc:
            _abandon(client)
            if isinstance(exc, TimeoutError):
                raise ConnectionError(f"no login within {info.timeout:g} s") from None
            raise
        for event, handler in self.handlers.items():
            client.add_event_handler(event, handler)
        client.add_event_handler("disconnected", self._disconnected)
        self.client = client
        if announce:
            client.send_presence()
            with contextlib.suppress(Exception):  # a roster we cannot read changes nothing
                await client.get_roster(timeout=info.timeout)
        return str(client.boundjid)

    def _make_client(self) -> Any:
        import slixmpp

        info = self.login_info
        # a resource of its own: a cron delivery beside the gateway's connection must not
        # replace it (the server keeps one session per full JID)
        resource = f"{info.resource}.{secrets.token_hex(3)}"
        client = slixmpp.ClientXMPP(f"{info.jid}/{resource}", info.password,
                                    loop=asyncio.get_running_loop())
        for plugin in PLUGINS:
            client.register_plugin(plugin)
        client.plugin["xep_0199"].enable_keepalive(KEEPALIVE, KEEPALIVE / 2)
        client.enable_direct_tls = info.tls == "direct"
        client.enable_starttls = info.tls == "starttls"
        client.enable_plaintext = info.tls == "none"
        if info.tls == "none":  # a loopback server only: the schema refuses any other
            mechanisms = client.plugin["feature_mechanisms"]
            mechanisms.unencrypted_scram = mechanisms.unencrypted_plain = True
        if info.ca_file:
            client.ca_certs = Path(info.ca_file)
        client.auto_authorize = None  # subscriptions are answered by the platform
        client.auto_subscribe = False
        return client

    async def join(self, room: str, nick: str) -> None:
        """Enter ``room`` as ``nick`` without its history; a room we create is made an
        instant room (a new room stays locked until configured)."""
        muc = self.client.plugin["xep_0045"]
        joined = self._self_presence(room)
        muc.join_muc(room, nick, maxhistory="0")
        presence = await asyncio.wait_for(joined, JOIN_TIMEOUT)
        if presence["type"] == "error":
            raise ConnectionError(f"cannot join {room}: {presence['error']['condition']}")
        if 201 in presence["muc"]["status_codes"]:
            form = self.client.plugin["xep_0004"].make_form(ftype="submit")
            await muc.set_room_config(room, form)

    def _self_presence(self, room: str) -> asyncio.Future[Any]:
        found: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def seen(presence: Any) -> None:
            if not found.done():
                found.set_result(presence)
        for event in (f"muc::{room}::self-presence", f"muc::{room}::presence-error"):
            self.client.add_event_handler(event, seen, disposable=True)
        return found

    def send(self, to: str, body: str | None, kind: str, state: str | None = None) -> str:
        """Send a message (or, without ``body``, a chat state alone); its id."""
        message = self.client.make_message(mto=to, mbody=body, mtype=kind)
        if state:
            message["chat_state"] = state
        message.send()
        return str(message["id"])

    def real_jid(self, room: str, nick: str) -> str:
        """The bare JID of ``nick`` in ``room`` where the room shows it, else ''."""
        jid = self.client.plugin["xep_0045"].get_jid_property(room, nick, "jid")
        return str(getattr(jid, "bare", "") or "") if jid else ""

    def authorize(self, jid: str) -> None:
        self.client.send_presence(pto=jid, ptype="subscribed")

    def _disconnected(self, reason: Any) -> None:
        self.on_lost(str(reason or "the server closed the connection"))

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        client.del_event_handler("disconnected", self._disconnected)
        if client.transport is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.disconnect(wait=2), 5)
        _abandon(client)


async def check_login(login: Login, log: logging.Logger) -> tuple[bool, str]:
    """``hermes doctor``: log in once, unseen, and out again; whether it worked, and why."""
    account = XmppAccount(login, log, {}, lambda _reason: None)
    try:
        me = await account.login(announce=False)
    except AccessDenied as exc:
        return False, str(exc)
    except ConnectionError as exc:
        return False, f"cannot log in to {login.host or login.jid.split('@')[1]}: {exc}"
    finally:
        await account.close()
    return True, f"logged in as {me}"


def _watch_login(client: Any, outcome: asyncio.Future[None], info: Login) -> None:
    """Settle ``outcome`` by the first of: session started, refused, failed."""
    tried: list[str] = []

    def settle(error: BaseException | None) -> Callable[[Any], None]:
        def handler(event: Any) -> None:
            if outcome.done():
                return
            if error is None:
                outcome.set_result(None)
            else:
                outcome.set_exception(error)
        return handler

    def refused(_event: Any) -> None:
        if not outcome.done():
            outcome.set_exception(AccessDenied(
                f"{info.jid}: the server rejected the password — set the right one: "
                "`hermes config set XMPP_PASSWORD <password>`" if tried else
                f"{info.jid}: the server offers no login method that is safe on this "
                f"connection (tls: {info.tls}); does it offer TLS?"))

    def failed(reason: Any) -> None:
        settle(ConnectionError(str(reason) or "connection failed"))(reason)

    client.add_event_handler("session_start", settle(None))
    client.add_event_handler("failed_auth", lambda _stanza: tried.append("yes"))
    client.add_event_handler("failed_all_auth", refused)
    client.add_event_handler("connection_failed", failed)
    client.add_event_handler("ssl_invalid_chain", lambda exc: failed(
        f"the server's certificate is not trusted ({exc}); give its CA in settings.ca_file"))
    client.add_event_handler("disconnected", lambda reason: failed(
        f"disconnected while logging in: {reason or 'closed by the server'}"))


def _abandon(client: Any) -> None:
    """Stop ``client`` for good: no connection attempt of its own goes on."""
    client.cancel_connection_attempt()
    with contextlib.suppress(Exception):
        client.abort()
