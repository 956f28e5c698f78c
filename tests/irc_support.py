"""IRC for tests: a real ngIRCd (Debian's /usr/sbin/ngircd) on free loopback ports, plain
and TLS (a certificate minted for ``localhost`` by a test CA), and ``IrcUser``, a small
blocking client that plays a person: it registers, joins, talks, and records every line
it receives with the time it arrived (for the latency bench as much as for asserts).

ngIRCd has no SASL and no services accounts: ``ScriptedServer`` is a tiny IRC server
speaking just what the SASL tests need (CAP, AUTHENTICATE, account tags), over real TCP.
"""

from __future__ import annotations

import base64
import contextlib
import shutil
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import wait_until
from fake_search_tls import TestCA
from gateway_support import free_port

NGIRCD = "/usr/sbin/ngircd"
SERVER_NAME = "irc.test"
OPER = ("admin", "oper-password-0123")
"""An IRC operator's name and password (``OPER``): a test may ``KILL`` a connection."""


@dataclass
class Ngircd:
    """A running ngIRCd: ``port`` speaks plain text, ``tls_port`` TLS; ``ca_file`` is the
    CA to trust for ``localhost``."""

    directory: Path
    port: int = 0
    tls_port: int = 0
    ca_file: Path = Path()
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        ca = TestCA(self.directory)
        ca.context_for("localhost")  # writes leaf-localhost.pem: certificate and key
        leaf = self.directory / "leaf-localhost.pem"
        self.ca_file = ca.ca_file
        self.port, self.tls_port = self.port or free_port(), self.tls_port or free_port()
        config = self.directory / "ngircd.conf"
        config.write_text(f"""[Global]
Name = {SERVER_NAME}
Info = Hermes test server
Listen = 127.0.0.1
Ports = {self.port}
MotdPhrase = "test server"
PidFile = {self.directory}/ngircd.pid
ServerUID = {_uid()}
ServerGID = {_uid()}
[Limits]
MaxNickLength = 30
MaxConnectionsIP = 0
PingTimeout = 120
PongTimeout = 20
MaxPenaltyTime = 0
[Options]
Ident = no
PAM = no
DNS = no
[Operator]
Name = {OPER[0]}
Password = {OPER[1]}
[SSL]
CertFile = {leaf}
KeyFile = {leaf}
Ports = {self.tls_port}
""")
        log = (self.directory / "ngircd.log").open("ab")
        self.proc = subprocess.Popen([NGIRCD, "-n", "-f", str(config)], stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        for port in (self.port, self.tls_port):
            wait_until(lambda p=port: _listening(p), 20, f"ngircd on port {port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def user(self, nick: str, **kwargs: object) -> IrcUser:
        return IrcUser("127.0.0.1", self.port, nick, **kwargs)  # type: ignore[arg-type]


def _uid() -> int:
    import os

    return os.getuid()


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


@pytest.fixture(scope="session")
def ngircd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ngircd]:
    if not shutil.which(NGIRCD):
        pytest.skip("ngircd is not installed (apt-get install ngircd)")
    server = Ngircd(tmp_path_factory.mktemp("ngircd"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class Heard:
    """One line an ``IrcUser`` received."""

    source: str
    command: str
    params: list[str]
    at: float
    """``time.monotonic()`` when it arrived."""
    size: int
    """Bytes of the line as it arrived, CR LF included."""

    @property
    def nick(self) -> str:
        return self.source.split("!", 1)[0]


@dataclass
class IrcUser:
    """A person on IRC (a blocking client with a reader thread)."""

    host: str
    port: int
    nick: str
    heard: list[Heard] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.create_connection((self.host, self.port), 10)
        self.sock.settimeout(None)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.raw(f"NICK {self.nick}")
        self.raw(f"USER {self.nick} 0 * :test user {self.nick}")
        wait_until(lambda: self.got("001") or self.got("433"), 20, f"{self.nick} to register")
        if self.got("433"):
            raise AssertionError(f"nick {self.nick} is taken")

    def _read(self) -> None:
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(65536):
                buffer += chunk
                while b"\r\n" in buffer:
                    raw, buffer = buffer.split(b"\r\n", 1)
                    self._take(raw.decode("utf-8", "replace"), len(raw) + 2)

    def _take(self, text: str, size: int) -> None:
        source = ""
        if text.startswith(":"):
            source, _, text = text[1:].partition(" ")
        head, colon, trailing = text.partition(" :")
        params = head.split()
        if colon:
            params.append(trailing)
        command = params.pop(0) if params else ""
        if command == "PING":
            self.raw(f"PONG :{params[-1] if params else ''}")
        with self._lock:
            self.heard.append(Heard(source, command, params, time.monotonic(), size))

    def raw(self, text: str) -> None:
        self.sock.sendall(text.encode("utf-8") + b"\r\n")

    def got(self, command: str) -> list[Heard]:
        with self._lock:
            return [h for h in self.heard if h.command == command]

    def join(self, channel: str) -> None:
        """Join ``channel`` (once: joined already, nothing is sent)."""
        def joined() -> list[Heard]:
            return [h for h in self.got("JOIN") if h.nick == self.nick
                    and h.params[0].lower() == channel.lower()]

        if not joined():
            self.raw(f"JOIN {channel}")
            wait_until(joined, 20, f"JOIN {channel}")

    def say(self, target: str, text: str) -> None:
        self.sent_at.append(time.monotonic())
        self.raw(f"PRIVMSG {target} :{text}")

    def mark(self) -> int:
        """Where the PRIVMSGs received so far end (``since`` of the next look)."""
        return len(self.got("PRIVMSG"))

    def messages(self, from_nick: str, target: str | None = None, since: int = 0) -> list[str]:
        """Texts of the PRIVMSGs ``from_nick`` sent (to ``target``: a channel; None: us),
        after ``since`` (a ``mark``)."""
        to = target or self.nick
        return [h.params[1] for h in self.got("PRIVMSG")[since:]
                if h.nick.lower() == from_nick.lower() and h.params[0].lower() == to.lower()]

    def lines_from(self, from_nick: str) -> list[Heard]:
        return [h for h in self.got("PRIVMSG") if h.nick.lower() == from_nick.lower()]

    def wait_messages(self, from_nick: str, count: int = 1, target: str | None = None,
                      timeout: float = 60, since: int = 0) -> list[str]:
        found = wait_until(lambda: (said := self.messages(from_nick, target, since))
                           and len(said) >= count and said, timeout,
                           f"{count} message(s) from {from_nick}")
        assert isinstance(found, list)
        return found

    def quit(self) -> None:
        with contextlib.suppress(OSError):
            self.raw("QUIT :bye")
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


Script = Callable[["ScriptedClient", str], None]


class ScriptedClient:
    """One connection to a ``ScriptedServer``: what the script can see and say."""

    def __init__(self, handler: socketserver.StreamRequestHandler):
        self._handler = handler
        self.nick = ""
        self.capped = False
        """Whether it began with CAP LS (then registration waits for CAP END)."""
        self.welcomed = False
        self.closed = False

    def send(self, text: str) -> None:
        self._handler.wfile.write(text.encode("utf-8") + b"\r\n")
        self._handler.wfile.flush()


class ScriptedServer(socketserver.ThreadingTCPServer):
    """A tiny IRC server on loopback: ``script`` answers each line a client sends; every
    line received is recorded in ``lines`` with the time it arrived."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, script: Script):
        self.script = script
        self.lines: list[tuple[float, str]] = []
        self.clients: list[ScriptedClient] = []
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                client = ScriptedClient(self)
                server.clients.append(client)
                with contextlib.suppress(OSError):
                    for raw in self.rfile:
                        text = raw.decode("utf-8", "replace").rstrip("\r\n")
                        server.lines.append((time.monotonic(), text))
                        server.script(client, text)
                client.closed = True

        super().__init__(("127.0.0.1", 0), Handler)
        self.port = int(self.server_address[1])
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def said(self, prefix: str) -> list[tuple[float, str]]:
        """Lines received that start with ``prefix`` (with their arrival times)."""
        return [(at, text) for at, text in list(self.lines) if text.startswith(prefix)]

    def client(self, nick: str) -> ScriptedClient:
        """The latest connection registered as ``nick`` and still open."""
        found = wait_until(lambda: next((c for c in reversed(self.clients) if c.nick == nick
                                         and c.welcomed and not c.closed), None), 30,
                           f"{nick} to register")
        assert isinstance(found, ScriptedClient)
        return found


@dataclass
class ServicesNetwork:
    """The script of a network with services accounts: SASL PLAIN against ``accounts``
    (name -> password), ``account-tag`` on the messages the test injects; the first PRIVMSG
    holding ``throttle_after`` is answered with ERR_TARGETTOOFAST (wait ``throttle``
    seconds). Without ``account_tag`` the server offers no account tags but answers WHOX
    queries from ``whox`` (nick -> account)."""

    accounts: dict[str, str]
    throttle: int = 2
    throttle_after: str = ""
    account_tag: bool = True
    whox: dict[str, str] = field(default_factory=dict)

    def __call__(self, client: ScriptedClient, text: str) -> None:
        command, _, rest = text.partition(" ")
        handler = getattr(self, f"_{command.lower()}", None)
        if handler is not None:
            handler(client, rest)

    def _cap(self, client: ScriptedClient, rest: str) -> None:
        if rest.startswith("LS"):
            client.capped = True
            tag = " account-tag" if self.account_tag else ""
            client.send(f":services.test CAP * LS :sasl{tag} message-tags multi-prefix")
        elif rest.startswith("REQ"):
            client.send(f":services.test CAP * ACK :{rest.split(':', 1)[-1].strip()}")
        elif rest == "END":
            self._welcome(client)

    def _authenticate(self, client: ScriptedClient, rest: str) -> None:
        if rest == "PLAIN":
            client.send("AUTHENTICATE +")
            return
        _authz, account, password = base64.b64decode(rest).decode().split("\0")
        if self.accounts.get(account) == password:
            client.send(f":services.test 900 * * {account} :You are now logged in as "
                        f"{account}")
            client.send(":services.test 903 * :SASL authentication successful")
        else:
            client.send(":services.test 904 * :SASL authentication failed")

    def _nick(self, client: ScriptedClient, rest: str) -> None:
        client.nick = rest.lstrip(":")
        if not client.capped:
            self._welcome(client)

    def _join(self, client: ScriptedClient, rest: str) -> None:
        for channel in rest.lstrip(":").split(","):
            client.send(f":{client.nick}!{client.nick}@services.test JOIN {channel}")

    def _who(self, client: ScriptedClient, rest: str) -> None:
        nick, fields = rest.split(" ", 1)
        token = fields.split(",", 1)[1]
        client.send(f":services.test 354 {client.nick} {token} {nick} "
                    f"{self.whox.get(nick, '0')}")
        client.send(f":services.test 315 {client.nick} {nick} :End of WHO list")

    def _ping(self, client: ScriptedClient, rest: str) -> None:
        client.send(f":services.test PONG services.test {rest}")

    def _privmsg(self, client: ScriptedClient, rest: str) -> None:
        if self.throttle_after and self.throttle_after in rest:
            self.throttle_after = ""
            target = rest.split(" ", 1)[0]
            client.send(f":services.test 439 {client.nick} {target} :Target change too "
                        f"fast. Please wait {self.throttle} seconds.")

    def _welcome(self, client: ScriptedClient) -> None:
        if client.nick and not client.welcomed:
            client.send(f":services.test 001 {client.nick} :Welcome")
            whox = "" if self.account_tag else " WHOX"
            client.send(f":services.test 005 {client.nick} CHANTYPES=#{whox} :are supported")
            client.send(f":services.test 422 {client.nick} :MOTD File is missing")
            client.welcomed = True
