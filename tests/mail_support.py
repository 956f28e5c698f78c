"""Real mail servers on loopback for the email platform's tests.

- IMAP: Debian's dovecot (``apt-get install dovecot-imapd``), run in the foreground with a
  generated config: a passwd-file of test users, Maildirs in a test directory, a free
  port. Outside CI a machine without dovecot (or not root: dovecot drops privileges to
  its own users) skips these tests saying why; on CI that is a failure.
- SMTP: aiosmtpd in the test process. Like a receiving mail server it stamps each
  message with ``Authentication-Results`` (``dmarc=pass`` only when the session logged
  in as the From address, else ``dmarc=fail``) and delivers it into the recipients'
  dovecot mailboxes with IMAP APPEND. ``defer`` makes it answer a user's next messages
  ``451`` (a rate limit); ``stop``/``start`` take it down and bring it back.
"""

from __future__ import annotations

import email
import imaplib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from pathlib import Path
from typing import Any

import pytest

from process_support import launch, terminate, wait_answering
from ssh_support import free_port

DOVECOT = "/usr/sbin/dovecot"
DOMAIN = "hermes.test"
AUTHSERV = "mx.hermes.test"
NO_IDLE = "imap_capability = IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE LITERAL+ UIDPLUS\n"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the email tests: .ci/run installs dovecot-imapd)")
    pytest.skip(reason)


@dataclass
class Dovecot:
    """A dovecot IMAP server with test users (``address -> password``)."""

    directory: Path
    port: int
    users: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def add_user(self, address: str, password: str) -> None:
        self.users[address] = password
        (self.directory / "users").write_text("".join(
            f"{user}:{{PLAIN}}{secret}::::::\n" for user, secret in self.users.items()))

    def configure(self, extra: str = "") -> None:
        mail = pwd.getpwnam("dovecot")
        (self.directory / "mail").mkdir(exist_ok=True)
        os.chown(self.directory / "mail", mail.pw_uid, mail.pw_gid)
        (self.directory / "dovecot.conf").write_text(_config(self.directory, self.port, mail)
                                                     + extra)
        self.add_user("nobody@" + DOMAIN, "unused")

    def start(self, timeout: float = 60) -> None:
        self.process = launch([DOVECOT, "-F", "-c", str(self.directory / "dovecot.conf")],
                              self.directory / "stdout.log")
        wait_answering(self.process, self._answers, "dovecot", self._tail, timeout)

    def stop(self) -> None:
        terminate(self.process)
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _answers(self) -> bool:
        try:
            with imaplib.IMAP4("127.0.0.1", self.port, timeout=2) as conn:
                return bool(conn.welcome)
        except OSError:
            return False

    def _tail(self) -> str:
        return "".join(p.read_text(errors="replace") for p in (
            self.directory / "stdout.log", self.directory / "dovecot.log") if p.exists())[-2000:]

    def imap(self, address: str) -> imaplib.IMAP4:
        conn = imaplib.IMAP4("127.0.0.1", self.port, timeout=30)
        conn.login(address, self.users[address])
        return conn

    def append(self, address: str, raw: bytes) -> None:
        """Deliver ``raw`` into ``address``'s INBOX (what a mail server's delivery does)."""
        conn = self.imap(address)
        try:
            status, detail = conn.append("INBOX", "", imaplib.Time2Internaldate(time.time()), raw)
            assert status == "OK", detail
        finally:
            conn.logout()

    def inbox(self, address: str) -> list[tuple[set[str], email.message.EmailMessage]]:
        """``(flags, message)`` of every message in ``address``'s INBOX, oldest first."""
        conn = self.imap(address)
        try:
            conn.select("INBOX")
            _status, data = conn.uid("SEARCH", "ALL")
            found = []
            for uid in data[0].split():
                _status, parts = conn.uid("FETCH", uid, "(FLAGS BODY.PEEK[])")
                meta, raw = parts[0]
                flags = set(imaplib.ParseFlags(meta))
                found.append(({f.decode() for f in flags}, email.message_from_bytes(
                    raw, policy=email.policy.default)))
            return found
        finally:
            conn.logout()


def _config(directory: Path, port: int, mail: pwd.struct_passwd) -> str:
    return f"""
protocols = imap
listen = 127.0.0.1
base_dir = {directory}/run
state_dir = {directory}/state
log_path = {directory}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = dovecot
default_login_user = dovenull
first_valid_uid = {mail.pw_uid}
mail_location = maildir:{directory}/mail/%n/Maildir
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {directory}/users
}}
userdb {{
  driver = static
  args = uid={mail.pw_uid} gid={mail.pw_gid} home={directory}/mail/%n
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
"""


def start_dovecot(*, capabilities_without_idle: bool = False) -> Dovecot:
    """A running dovecot in a directory of its own under /tmp: its users must reach the
    passwd-file and the Maildirs (pytest's temporary directories are 0700), and its unix
    sockets need a short path. ``remove`` stops it and deletes the directory.
    ``capabilities_without_idle``: a server that cannot announce new mail."""
    if not Path(DOVECOT).exists():
        _unavailable("dovecot is not installed (apt-get install dovecot-imapd)")
    if os.geteuid() != 0:
        _unavailable("dovecot serves the test mailboxes only when started as root")
    try:
        pwd.getpwnam("dovecot")
    except KeyError:
        _unavailable("dovecot's system user is missing (reinstall dovecot-core)")
    directory = Path(tempfile.mkdtemp(prefix="hermes-dovecot-"))
    directory.chmod(0o755)
    server = Dovecot(directory, free_port())
    server.configure(NO_IDLE if capabilities_without_idle else "")
    server.start()
    return server


class Smtp:
    """aiosmtpd on a loopback port, delivering into dovecot."""

    def __init__(self, dovecot: Dovecot):
        self.dovecot = dovecot
        self.port = free_port()
        self.deferrals = 0
        """Messages of ``deferred_login`` still to be refused with 451 (a rate limit)."""
        self.deferred_login = ""
        self.deferred = 0
        self.received: list[tuple[str, list[str], EmailMessage]] = []
        """``(login, recipients, message)`` of every message accepted."""
        self.controller: Any = None

    def start(self) -> None:
        from aiosmtpd.controller import Controller

        self.controller = Controller(self, hostname="127.0.0.1", port=self.port,
                                     authenticator=self._authenticate, auth_require_tls=False,
                                     server_hostname=AUTHSERV, ready_timeout=30)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def defer(self, count: int, login: str) -> None:
        """Refuse the next ``count`` messages submitted by ``login`` with 451."""
        self.deferrals, self.deferred_login = count, login

    def _authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                      auth_data: Any) -> Any:
        from aiosmtpd.smtp import AuthResult, LoginPassword

        if isinstance(auth_data, LoginPassword):
            login = auth_data.login.decode()
            if self.dovecot.users.get(login) == auth_data.password.decode():
                return AuthResult(success=True, auth_data=login)
        return AuthResult(success=False, handled=False)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        import asyncio

        login = session.auth_data if isinstance(session.auth_data, str) else ""
        if self.deferrals > 0 and login == self.deferred_login:
            self.deferrals -= 1
            self.deferred += 1
            return "451 4.7.1 Too many messages, slow down"
        raw = envelope.original_content or envelope.content
        message = email.message_from_bytes(raw, policy=email.policy.default)
        sender = parseaddr(str(message.get("From", "")))[1].lower()
        verdict = "pass" if login and login == sender else "fail"
        stamp = (f"Authentication-Results: {AUTHSERV}; dmarc={verdict} "
                 f"header.from={sender.rpartition('@')[2]}\r\n").encode()
        for recipient in envelope.rcpt_tos:
            if recipient in self.dovecot.users:
                await asyncio.to_thread(self.dovecot.append, recipient, stamp + raw)
        self.received.append((login, list(envelope.rcpt_tos), message))
        return "250 OK delivered"


def mail(sender: str, to: str, subject: str, text: str, *, name: str = "",
         reply_to: EmailMessage | None = None, headers: dict[str, str] | None = None
         ) -> EmailMessage:
    """A message as a person's mail client writes it."""
    message = EmailMessage()
    message["From"] = f"{name} <{sender}>" if name else sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2])
    if reply_to is not None:
        message["In-Reply-To"] = reply_to["Message-ID"]
        message["References"] = " ".join(filter(None, [str(reply_to.get("References", "")),
                                                      str(reply_to["Message-ID"])]))
    for key, value in (headers or {}).items():
        message[key] = value
    message.set_content(text + "\n")
    return message


def send(smtp: Smtp, message: EmailMessage, *, login: str | None = None,
         password: str | None = None) -> None:
    """Submit ``message`` through the test SMTP server, logged in as ``login`` if given."""
    import smtplib

    with smtplib.SMTP("127.0.0.1", smtp.port, timeout=30) as client:
        if login is not None:
            client.login(login, password or smtp.dovecot.users[login])
        client.send_message(message)



@dataclass
class MailServers:
    """Dovecot and the SMTP server in front of it."""

    dovecot: Dovecot
    smtp: Smtp

    def stop(self) -> None:
        self.smtp.stop()
        self.dovecot.remove()


def start_mail_servers() -> MailServers:
    dovecot = start_dovecot()
    smtp = Smtp(dovecot)
    smtp.start()
    return MailServers(dovecot, smtp)
