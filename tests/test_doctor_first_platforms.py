"""``hermes doctor`` checks the credentials of the first platform kinds with one cheap call
each: Telegram's ``getMe`` (the fake Bot API, tests/fakebot), an IMAP login (a real
dovecot, tests/mail_support); Matrix's ``whoami`` is checked against Synapse in
tests/test_matrix.py. A refused credential is a failure row (exit status 1) naming the
secret to fix, and never shows the secret."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok
from fakebot import FakeBotAPI, serving
from mail_support import MailServers
from messaging_support import configure_messaging

TOKEN = "123456789:AAH-doctor-test-token-0123456789abcdefg"
REVOKED = "123456789:AAH-revoked-token-0123456789abcdefgh"
AGENT = "doctor@hermes.test"


@pytest.fixture(scope="module")
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def row(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if f"platform {name}" in line)


def test_doctor_checks_the_telegram_token_with_get_me(hermes, root: Path,
                                                      bot: FakeBotAPI) -> None:
    configure_messaging(root, "http://127.0.0.1:9/v1", {
        "telegram": {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}",
                     "settings": {"base_url": bot.url}}}, {"TELEGRAM_BOT_TOKEN": TOKEN})
    before = len(bot.of("getMe"))
    out = ok(hermes("doctor", "--offline"))
    assert "not checked (--offline): telegram" in row(out, "telegram")
    assert len(bot.of("getMe")) == before
    checked = hermes("doctor")  # the provider is unreachable: exit 1 for that row
    assert "ok" in row(checked.stdout, "telegram")
    assert "bot @hermes_test_bot" in row(checked.stdout, "telegram")
    assert len(bot.of("getMe")) == before + 1
    (root / ".env").write_text((root / ".env").read_text().replace(TOKEN, REVOKED))
    failed = hermes("doctor")
    line = row(failed.stdout, "telegram")
    assert failed.exit_code == 1 and "fail" in line and "check TELEGRAM_BOT_TOKEN" in line
    assert REVOKED not in failed.stdout and "AAH-revoked" not in failed.stdout


def test_doctor_checks_the_mailbox_with_an_imap_login(hermes, root: Path,
                                                      mail_servers: MailServers) -> None:
    dovecot = mail_servers.dovecot
    password = "pw-doctor-0123456789"
    dovecot.add_user(AGENT, password)
    settings = {"address": AGENT, "imap_host": "127.0.0.1", "imap_port": dovecot.port,
                "imap_tls": "none", "smtp_host": "127.0.0.1", "smtp_tls": "none",
                "require_authentication": False}
    configure_messaging(root, "http://127.0.0.1:9/v1", {
        "email": {"kind": "email", "token": "${secret:EMAIL_PASSWORD}", "settings": settings},
        "broken": {"kind": "email", "token": "${secret:WRONG_PASSWORD}",
                   "settings": settings}},
        {"EMAIL_PASSWORD": password, "WRONG_PASSWORD": "not-the-password-123"})
    out = hermes("doctor").stdout
    assert "ok" in row(out, "email")
    assert f"{AGENT} logged in to IMAP 127.0.0.1:{dovecot.port}" in row(out, "email")
    broken = row(out, "broken")
    assert "fail" in broken and "refused the login" in broken and "EMAIL_PASSWORD" in broken
    assert password not in out and "not-the-password-123" not in out
