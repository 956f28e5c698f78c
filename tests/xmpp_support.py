"""A real XMPP server on loopback for the xmpp platform's tests: Debian's prosody, run in
the foreground with a generated config and data directory in a temp dir, free loopback
ports (STARTTLS and direct TLS), a MUC component, and a certificate for ``example.org``
signed by a test CA minted here (``Prosody.ca_file``: the agent is given it explicitly,
nothing disables verification). Accounts are made with ``prosodyctl register``.
``XmppUser`` is a person: a slixmpp client in its own thread that logs in, talks one to
one or in rooms, and records what it receives (with the time it arrived).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from process_support import launch, terminate, wait_answering
from ssh_support import free_port

PROSODY = "/usr/bin/prosody"
PROSODYCTL = "/usr/bin/prosodyctl"
DOMAIN = "example.org"
MUC = f"conference.{DOMAIN}"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the xmpp tests: .ci/run installs prosody)")
    pytest.skip(reason)


def mint_certificate(directory: Path, names: list[str]) -> tuple[Path, Path, Path]:
    """A test CA and a key and certificate for ``names`` signed by it: (ca, cert, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(
        ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hermes test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = directory / "ca.pem", directory / "server.crt", directory / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    paths[2].chmod(0o600)
    return paths


@dataclass
class Prosody:
    """A prosody server for ``example.org`` (and its MUC ``conference.example.org``)."""

    directory: Path
    port: int
    """STARTTLS (c2s)."""
    tls_port: int
    """Direct TLS (XEP-0368)."""
    ca_file: Path = field(init=False)
    process: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.directory / "prosody.cfg.lua"

    def configure(self) -> None:
        (self.directory / "data").mkdir(exist_ok=True)
        self.ca_file, cert, key = mint_certificate(self.directory, [DOMAIN, MUC])
        self.config.write_text(_config(self.directory, self.port, self.tls_port, cert, key))

    def start(self, timeout: float = 30) -> None:
        self.process = launch([PROSODY, "--config", str(self.config), "-F"],
                              self.directory / "stdout.log")
        wait_answering(self.process, self._answers, "prosody", self._tail, timeout)

    def stop(self) -> None:
        terminate(self.process)
        self.process = None

    def register(self, user: str, password: str) -> str:
        """Make the account ``user@example.org``; its JID."""
        subprocess.run([PROSODYCTL, "--config", str(self.config), "register", user, DOMAIN,
                        password], check=True, capture_output=True, timeout=30)
        return f"{user}@{DOMAIN}"

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def _tail(self) -> str:
        log = self.directory / "prosody.log"
        return log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"


def _config(directory: Path, port: int, tls_port: int, cert: Path, key: Path) -> str:
    return f"""
run_as_root = true
prosody_user = "root"
daemonize = false
pidfile = "{directory}/prosody.pid"
data_path = "{directory}/data"
admin_socket = "{directory}/admin.sock"
log = {{ info = "{directory}/prosody.log" }}
interfaces = {{ "127.0.0.1" }}
c2s_ports = {{ {port} }}
c2s_direct_tls_ports = {{ {tls_port} }}
s2s_ports = {{ }}
http_ports = {{ }}
https_ports = {{ }}
modules_enabled = {{ "roster", "saslauth", "tls", "disco", "ping", "presence", "posix",
                    "offline" }}
modules_disabled = {{ "s2s" }}
authentication = "internal_hashed"
storage = "internal"
c2s_require_encryption = true
allow_registration = false
limits = {{ c2s = {{ rate = "1mb/s" }} }}
ssl = {{ certificate = "{cert}", key = "{key}" }}
VirtualHost "{DOMAIN}"
Component "{MUC}" "muc"
  restrict_room_creation = false
  muc_room_default_history_length = 20
"""


def start_prosody(directory: Path) -> Prosody:
    """A configured, running prosody in ``directory`` (skipped where it is not installed)."""
    if not Path(PROSODY).exists():
        _unavailable("prosody is not installed (apt-get install prosody)")
    server = Prosody(directory, free_port(), free_port())
    server.configure()
    server.start()
    return server


@contextmanager
def prosody_server(directory: Path) -> Iterator[Prosody]:
    server = start_prosody(directory)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class Received:
    """One message a person received."""

    sender: str
    """The full JID it came from (``room@conference.example.org/nick`` in a room)."""
    body: str
    kind: str
    """``chat`` or ``groupchat``."""
    stanza_id: str
    at: float
    """``time.monotonic()`` when it arrived."""


class XmppUser:
    """A person's slixmpp client, run in its own thread and event loop."""

    def __init__(self, server: Prosody, jid: str, password: str):
        import slixmpp

        self.server = server
        self.jid = jid
        self.loop = asyncio.new_event_loop()
        self.received: list[Received] = []
        self.states: list[tuple[str, str]] = []
        """Chat states received: (sender, state)."""
        self._ready = threading.Event()
        self.client = slixmpp.ClientXMPP(jid, password, loop=self.loop)
        for plugin in ("xep_0004", "xep_0030", "xep_0045", "xep_0066", "xep_0085",
                       "xep_0199", "xep_0461"):
            self.client.register_plugin(plugin)
        self.client.enable_direct_tls = False
        self.client.ca_certs = server.ca_file
        self.client.add_event_handler("session_start", self._started)
        self.client.add_event_handler("message", self._message)
        self.client.add_event_handler("chatstate", self._state)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise AssertionError(f"{jid} could not log in to prosody")

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.client.connect("127.0.0.1", self.server.port)
        self.loop.run_forever()

    async def _started(self, _event: Any) -> None:
        self.client.send_presence()
        await self.client.get_roster()
        self._ready.set()

    def _message(self, msg: Any) -> None:
        if msg["body"] and msg["type"] in ("chat", "groupchat", "normal"):
            self.received.append(Received(str(msg["from"]), msg["body"], msg["type"],
                                          msg["id"], time.monotonic()))

    def _state(self, msg: Any) -> None:
        self.states.append((str(msg["from"]), msg["chat_state"]))

    def call(self, coro: Any, timeout: float = 30) -> Any:
        """Run ``coro`` on the client's loop; its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def do(self, action: Any, *args: Any, **kwargs: Any) -> None:
        """Call ``action`` on the client's loop and wait for it."""
        async def run() -> None:
            action(*args, **kwargs)
        self.call(run())

    def subscribe(self, to: str, timeout: float = 30) -> None:
        """Ask to see ``to``'s presence; returns once ``to`` allowed it."""
        allowed = threading.Event()
        self.client.add_event_handler("presence_subscribed", lambda p: str(p["from"].bare) == to
                                      and allowed.set())
        self.do(self.client.send_presence, pto=to, ptype="subscribe")
        if not allowed.wait(timeout):
            raise AssertionError(f"{to} did not allow {self.jid}'s subscription")

    def say(self, to: str, body: str, *, reply_to: Received | None = None,
            link: str = "") -> str:
        """Send a chat (or, to a room's bare JID, groupchat) message; its id."""
        kind = "groupchat" if to.endswith(f"@{MUC}") else "chat"
        msg = self.client.make_message(mto=to, mbody=body, mtype=kind)
        if reply_to is not None:
            msg["reply"]["id"] = reply_to.stanza_id
            msg["reply"]["to"] = reply_to.sender
        if link:  # an attachment, as clients send an uploaded file (XEP-0066)
            msg["oob"]["url"] = link
        msg["chat_state"] = "active"
        self.do(msg.send)
        return str(msg["id"])

    def join(self, room: str, nick: str) -> None:
        """Enter ``room``; a room this creates shows its occupants' JIDs to all."""
        self.call(self._join(room, nick))

    async def _join(self, room: str, nick: str) -> None:
        joined: asyncio.Future[Any] = self.loop.create_future()
        self.client.add_event_handler(f"muc::{room}::self-presence",
                                      lambda p: joined.done() or joined.set_result(p),
                                      disposable=True)
        self.client.plugin["xep_0045"].join_muc(room, nick, maxhistory="0")
        presence = await asyncio.wait_for(joined, 20)
        if 201 in presence["muc"]["status_codes"]:  # made here: JIDs shown to everyone
            form = self.client.plugin["xep_0004"].make_form(ftype="submit")
            form.add_field(var="FORM_TYPE", ftype="hidden",
                           value="http://jabber.org/protocol/muc#roomconfig")
            form.add_field(var="muc#roomconfig_whois", value="anyone")
            await self.client.plugin["xep_0045"].set_room_config(room, form)

    def from_(self, sender_prefix: str) -> list[Received]:
        """Messages from JIDs starting with ``sender_prefix`` (a bare JID or a room/nick)."""
        return [m for m in self.received if m.sender.startswith(sender_prefix)]

    def reconnect(self, timeout: float = 30) -> None:
        """Log in again (after the server was restarted)."""
        self._ready.clear()
        self.loop.call_soon_threadsafe(self.client.connect, "127.0.0.1", self.server.port)
        if not self._ready.wait(timeout):
            raise AssertionError(f"{self.jid} could not log in again")

    def close(self) -> None:
        async def stop() -> None:
            if self.client.transport is not None:  # still connected (not after a restart)
                self.client.disconnect(wait=1)
                await asyncio.wait_for(asyncio.shield(self.client.disconnected), 5)
            self.client.cancel_connection_attempt()
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)
        try:
            self.call(stop(), timeout=10)
        finally:  # the loop is left open: slixmpp's objects call into it when collected
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
