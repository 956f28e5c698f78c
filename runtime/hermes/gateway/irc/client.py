"""One connection to an IRC server over asyncio streams: TLS, registration (IRCv3
capabilities, SASL PLAIN, a fallback nick when ours is taken), then a reader task that
answers PINGs, pings a silent server, keeps the joined channels, the accounts the server
tells of and our own nick (taken back when it is free), and hands private and channel
messages on in order."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import re
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes.gateway.irc.protocol import UNKNOWN_PREFIX, Line, fold, line, parse
from hermes.gateway.messaging.connection import AccessDenied, describe
from hermes.gateway.messaging.outbox import Disconnected, Rejected

if TYPE_CHECKING:  # the kind module is loaded through platform_schema, never first
    from hermes.config.platform_kinds.irc import Settings

WANTED_CAPS = frozenset({"account-tag", "account-notify", "extended-join", "message-tags"})
REGISTER_TIMEOUT = 30.0
JOIN_TIMEOUT = 15.0
WHO_TIMEOUT = 5.0
WHO_TOKEN = "152"
"""Marks the answers (354) to our own WHOX queries."""
MAX_FALLBACKS = 10
SASL_FAILED = {"902": "the account is locked", "904": "the password was refused",
               "905": "the login was too long", "906": "the login was aborted",
               "908": "the server offers no SASL PLAIN"}
JOIN_ERRORS = {"403", "405", "471", "473", "474", "475", "477"}
THROTTLED = {"263", "439"}
"""RPL_TRYAGAIN and ERR_TARGETTOOFAST: the server's own flood control speaking."""


@dataclass(frozen=True)
class Login:
    """Where to connect and who to be."""

    server: str
    port: int
    tls: bool
    ca_file: str
    nick: str
    username: str
    realname: str
    password: str | None
    sasl_username: str
    server_password: str | None
    key: str
    """The platform's config key, for errors (``platforms.enabled.irc``)."""


def login_for(settings: Settings, key: str) -> Login:
    """The ``Login`` of a platform's settings (``key``: its config key)."""
    return Login(settings.server, settings.port, settings.tls, settings.ca_file,
                 settings.nick, settings.username, settings.realname, settings.password,
                 settings.sasl_username, settings.server_password, key)


async def check_login(login: Login, log: logging.Logger) -> tuple[bool, str]:
    """``hermes doctor``: connect, register (SASL too, when set) and quit; whether it
    worked, and what the server said."""
    client = IrcClient(login, log)
    where = f"{login.server}:{login.port}"
    try:
        await client.open()
    except AccessDenied as exc:
        return False, str(exc)
    except Exception as exc:  # noqa: BLE001 - unreachable, TLS refused, ...: one line
        return False, f"{where}: {describe(exc)}"
    finally:
        await client.close("hermes doctor")
    account = f", SASL account {login.sasl_username or login.nick} accepted" \
        if login.password else ""
    taken = f" ({login.nick} is in use: the gateway's own connection?)" \
        if fold(client.nick) != fold(login.nick) else ""
    return True, (f"{where} ({'TLS' if login.tls else 'plain text'}): registered as "
                  f"{client.nick}{account}{taken}")


class IrcClient:
    """The agent's connection to one server (made again by ``open`` after a loss)."""

    def __init__(self, login: Login, log: logging.Logger, ping_interval: float = 90.0,
                 regain_interval: float = 60.0):
        self.login = login
        self.log = log
        self.ping_interval = ping_interval
        self.regain_interval = regain_interval
        self.nick = login.nick
        self.mask = ""
        """Our own ``nick!user@host`` as the server relays it (once seen)."""
        self.caps: set[str] = set()
        self.chantypes = "#&"
        self.whox = False
        self.accounts: dict[str, str] = {}
        """Folded nick -> account ("" none), from extended-join and account-notify."""
        self.joined: set[str] = set()
        self.throttled_until = 0.0
        self.lost: str | None = "not connected"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self._messages: asyncio.Queue[Line | None] = asyncio.Queue()
        self._joins: dict[str, asyncio.Future[None]] = {}
        self._whos: dict[str, asyncio.Future[str]] = {}
        self._last_regain = 0.0
        self._fallbacks = 0
        self._nick_limit = 30

    # connecting ---------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and register; ``AccessDenied`` when the server refuses our login."""
        await self.close()
        login = self.login
        context = _tls_context(login.ca_file) if login.tls else None
        try:
            self._reader, self._writer = await asyncio.wait_for(asyncio.open_connection(
                login.server, login.port, ssl=context,
                server_hostname=login.server if context else None), REGISTER_TIMEOUT)
        except ssl.SSLCertVerificationError as exc:  # no retry makes it trusted
            raise AccessDenied(f"{login.server}:{login.port}: the server's certificate is "
                               f"not trusted ({exc.verify_message}) — give its CA in "
                               f"{login.key}.settings.ca_file, or check "
                               f"{login.key}.settings.server") from exc
        self.nick, self.mask, self.caps, self.joined = login.nick, "", set(), set()
        self.accounts.clear()
        self._messages = asyncio.Queue()
        try:
            await asyncio.wait_for(self._register(), REGISTER_TIMEOUT)
        except BaseException:
            await self.close()
            raise
        self.lost = None
        self._task = asyncio.create_task(self._read_forever())

    async def _register(self) -> None:
        login = self.login
        await self.write(line("CAP", "LS", "302"))
        if login.server_password:
            await self.write(line("PASS", login.server_password))
        await self.write(line("NICK", self.nick))
        await self.write(line("USER", login.username or login.nick, "0", "*", login.realname))
        offered: set[str] = set()
        self._fallbacks, self._nick_limit, welcomed = 0, 30, False
        while True:
            message = await self._receive()
            command = message.command
            if command == "CAP":
                await self._cap(message, offered)
            elif command == "AUTHENTICATE" and message.param(0) == "+":
                await self._authenticate()
            elif command == "903":
                await self.write(line("CAP", "END"))
            elif command in {"433", "436"} or (command == "432" and self._fallbacks):
                await self._nick_taken(command)
            elif command == "001":
                self.nick, welcomed = message.param(0) or self.nick, True
            elif command == "005":
                self._isupport(message.params[1:-1])
            elif command in {"376", "422"} and welcomed:
                return
            else:
                _refused(message, login)

    async def _nick_taken(self, command: str) -> None:
        """Try the next fallback nick (a shorter one when the last was too long)."""
        login = self.login
        if command == "432":
            self._nick_limit = len(self.nick) - 1
        self._fallbacks += 1
        if self._fallbacks > MAX_FALLBACKS:
            raise AccessDenied(f"{login.server}: the nick {login.nick} and its fallbacks are "
                               f"all taken — set {login.key}.settings.nick")
        self.nick = fallback(login.nick, self._fallbacks, self._nick_limit)
        await self.write(line("NICK", self.nick))

    async def _cap(self, message: Line, offered: set[str]) -> None:
        sub, login = message.param(1).upper(), self.login
        if sub == "LS":
            offered.update(cap.split("=", 1)[0] for cap in message.params[-1].split())
            if message.param(2) == "*":
                return  # more to come
            wanted = WANTED_CAPS & offered
            if login.password:
                if "sasl" not in offered:
                    raise AccessDenied(f"{login.server} offers no SASL login, and "
                                       f"{login.key}.settings.password is set — remove it, "
                                       "or connect to a server with SASL")
                wanted = wanted | {"sasl"}
            await self.write(line("CAP", "REQ", " ".join(sorted(wanted))) if wanted else
                             line("CAP", "END"))
        elif sub == "ACK":
            self.caps.update(message.params[-1].split())
            await self.write(line("AUTHENTICATE", "PLAIN") if "sasl" in self.caps else
                             line("CAP", "END"))
        elif sub == "NAK":
            if login.password:
                raise AccessDenied(f"{login.server} refused the SASL capability — check "
                                   f"{login.key}.settings.password")
            await self.write(line("CAP", "END"))

    async def _authenticate(self) -> None:
        login = self.login
        account = login.sasl_username or login.nick
        payload = base64.b64encode(f"{account}\0{account}\0{login.password}".encode()
                                   ).decode()
        chunks = [payload[i:i + 400] for i in range(0, len(payload), 400)]
        if len(chunks[-1]) == 400:
            chunks.append("+")
        for chunk in chunks:
            await self.write(line("AUTHENTICATE", chunk))

    def _isupport(self, tokens: list[str]) -> None:
        for token in tokens:
            name, _, value = token.partition("=")
            if name == "CHANTYPES":
                self.chantypes = value
            elif name == "WHOX":
                self.whox = True

    # reading ------------------------------------------------------------------------

    async def _receive(self, timeout: float | None = None) -> Line:
        """The next line (PINGs answered here); ``TimeoutError`` after ``timeout`` s."""
        assert self._reader is not None, "open() connects"
        while True:
            raw = await asyncio.wait_for(self._reader.readline(), timeout)
            if not raw:
                raise ConnectionError(f"{self.login.server} closed the connection")
            message = parse(_decode(raw).rstrip("\r\n"))
            if message.command == "PING":
                await self.write(line("PONG", *message.params))
            elif message.command == "ERROR":
                raise ConnectionError(f"{self.login.server}: {message.param(0)}")
            elif message.command:
                return message

    async def _read_forever(self) -> None:
        try:
            await self._read()
        except Exception as exc:  # noqa: BLE001 - any failure is a lost connection
            self.lost = str(exc) or type(exc).__name__
        else:
            self.lost = "closed"
        for waiting in self._joins.values():
            if not waiting.done():
                waiting.set_exception(Disconnected(self.lost))
        for asked in self._whos.values():
            if not asked.done():
                asked.set_result("")
        self._messages.put_nowait(None)

    async def _read(self) -> None:
        heard, pinged = time.monotonic(), False
        while True:
            await self._regain()
            deadline = heard + self.ping_interval * (2 if pinged else 1)
            try:
                message = await self._receive(max(0.05, min(self._wait(),
                                                            deadline - time.monotonic())))
            except TimeoutError:
                if time.monotonic() < deadline:
                    continue  # time to try for our nick
                if pinged:
                    raise ConnectionError(f"{self.login.server} did not answer a PING in "
                                          f"{self.ping_interval:g} s") from None
                await self.write(line("PING", "hermes"))
                pinged = True
                continue
            heard, pinged = time.monotonic(), False
            self._track(message)
            if message.command == "PRIVMSG" and len(message.params) == 2:
                self._messages.put_nowait(message)

    def _wait(self) -> float:
        """Seconds until the next try for our own nick (the ping interval: none due)."""
        if fold(self.nick) == fold(self.login.nick):
            return self.ping_interval
        return self._last_regain + self.regain_interval - time.monotonic()

    async def _regain(self) -> None:
        due = time.monotonic() >= self._last_regain + self.regain_interval
        if fold(self.nick) != fold(self.login.nick) and due:
            self._last_regain = time.monotonic()
            await self.write(line("NICK", self.login.nick))

    def _track(self, message: Line) -> None:
        """Keep what later messages need: our nick and mask, channels, accounts."""
        command, me = message.command, fold(message.nick) == fold(self.nick)
        if command == "NICK":
            if me:
                self.nick = message.param(0)
                self._note("irc nick changed", nick=self.nick)
            self._moved(message.nick, message.param(0))
        elif command == "QUIT":
            self._moved(message.nick, "")
        elif command == "JOIN":
            self._joined(message, me)
        elif command in {"PART", "KICK"}:
            gone = message.param(1) if command == "KICK" else message.nick
            if fold(gone) == fold(self.nick):
                self.joined.discard(fold(message.param(0)))
        elif command == "ACCOUNT":
            self.accounts[fold(message.nick)] = "" if message.param(0) == "*" else \
                message.param(0)
        elif command == "354" and message.param(1) == WHO_TOKEN:
            asked = self._whos.pop(fold(message.param(2)), None)
            if asked and not asked.done():
                asked.set_result("" if message.param(3) == "0" else message.param(3))
        elif command in JOIN_ERRORS:
            self._join_failed(message)
        elif command in THROTTLED:
            self._throttled(message)

    def _moved(self, old: str, new: str) -> None:
        account = self.accounts.pop(fold(old), None)
        if new and account is not None:
            self.accounts[fold(new)] = account
        if fold(old) == fold(self.login.nick) and fold(self.nick) != fold(self.login.nick):
            self._last_regain = 0.0  # our own nick is free: the next wait ends at once

    def _joined(self, message: Line, me: bool) -> None:
        channel = fold(message.param(0))
        if me:
            self.mask = message.source
            self.joined.add(channel)
            waiting = self._joins.pop(channel, None)
            if waiting and not waiting.done():
                waiting.set_result(None)
        elif "extended-join" in self.caps and len(message.params) >= 2:
            self.accounts[fold(message.nick)] = "" if message.param(1) == "*" else \
                message.param(1)

    def _join_failed(self, message: Line) -> None:
        channel = fold(message.param(1))
        waiting = self._joins.pop(channel, None)
        reason = f"cannot join {message.param(1)}: {message.params[-1]}"
        self._note("irc join refused", logging.WARNING, channel=message.param(1),
                   error=message.params[-1])
        if waiting and not waiting.done():
            waiting.set_exception(Rejected(reason))

    def _throttled(self, message: Line) -> None:
        found = re.search(r"(\d+)\s*sec", message.params[-1] if message.params else "")
        seconds = float(found[1]) if found else 2.0
        self.throttled_until = time.monotonic() + seconds
        self._note("irc server throttles us", logging.WARNING, seconds=seconds,
                   reason=message.params[-1] if message.params else "")

    def _note(self, event: str, level: int = logging.INFO, **fields: object) -> None:
        platform = self.login.key.rsplit(".", 1)[-1]
        self.log.log(level, event, extra={"fields": {"platform": platform, **fields}})

    async def next_message(self) -> Line:
        """The next PRIVMSG; ``ConnectionError`` once the connection is lost."""
        message = await self._messages.get()
        if message is None:
            raise ConnectionError(self.lost or "closed")
        return message

    def account_of(self, message: Line) -> str | None:
        """The sender's account as the server tells it ("" none; None: not known)."""
        if "account-tag" in self.caps:
            return message.tags.get("account", "")
        return self.accounts.get(fold(message.nick))

    async def lookup_account(self, nick: str) -> str | None:
        """``nick``'s account by a WHOX query ("" none; None: the server has no WHOX or
        did not answer in time)."""
        if not self.whox:
            return None
        key = fold(nick)
        asked = self._whos.get(key)
        if asked is None:
            asked = self._whos[key] = asyncio.get_running_loop().create_future()
            await self.write(line("WHO", nick, f"%tna,{WHO_TOKEN}"))
        try:
            return await asyncio.wait_for(asyncio.shield(asked), WHO_TIMEOUT)
        except TimeoutError:
            self._whos.pop(key, None)
            return None

    # writing ------------------------------------------------------------------------

    def is_channel(self, target: str) -> bool:
        return bool(target) and target[0] in self.chantypes

    def prefix_length(self) -> int:
        """Bytes the server puts before what we send (``:mask ``)."""
        return len(self.mask.encode()) + 2 if self.mask else UNKNOWN_PREFIX

    async def write(self, text: str) -> None:
        if self._writer is None:
            raise Disconnected("not connected")
        try:
            self._writer.write(text.encode("utf-8"))
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:
            raise Disconnected(str(exc) or type(exc).__name__) from exc

    async def join(self, channel: str) -> None:
        """Join ``channel`` (``Rejected`` when the server refuses)."""
        key = fold(channel)
        if key in self.joined:
            return
        waiting = self._joins.get(key)
        if waiting is None:
            waiting = self._joins[key] = asyncio.get_running_loop().create_future()
            await self.write(line("JOIN", channel))
        try:
            await asyncio.wait_for(asyncio.shield(waiting), JOIN_TIMEOUT)
        except TimeoutError:
            self._joins.pop(key, None)
            raise Rejected(f"no answer to JOIN {channel} in {JOIN_TIMEOUT:g} s") from None

    async def close(self, reason: str = "") -> None:
        task, writer = self._task, self._writer
        self._task, self._writer, self._reader = None, None, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if writer is not None:
            with contextlib.suppress(Exception):
                if reason:
                    writer.write(line("QUIT", reason).encode())
                writer.close()
                await asyncio.wait_for(writer.wait_closed(), 5)


def _refused(message: Line, login: Login) -> None:
    """``AccessDenied`` when ``message`` refuses our login for good (else nothing)."""
    command, said = message.command, message.params[-1] if message.params else ""
    if command in SASL_FAILED:
        raise AccessDenied(f"{login.server} refused the SASL login of "
                           f"{login.sasl_username or login.nick}: {SASL_FAILED[command]} — "
                           f"check the secret {login.key}.settings.password names")
    if command == "432":
        raise AccessDenied(f"{login.server} refuses the nick {login.nick}: {said} — set "
                           f"{login.key}.settings.nick")
    if command in {"464", "465"}:
        raise AccessDenied(f"{login.server} refused us: {said} — check "
                           f"{login.key}.settings.server_password")


def fallback(nick: str, attempt: int, limit: int = 30) -> str:
    """The ``attempt``-th nick to try when ``nick`` is taken: ``nick_``, ``nick__``, ...
    (cut to ``limit`` characters, the underscores kept)."""
    underscores = "_" * min(attempt, 3)
    number = str(attempt - 3) if attempt > 3 else ""
    tail = underscores + number
    return nick[:max(1, limit - len(tail))] + tail


def _tls_context(ca_file: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file or None)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # what older clients send
