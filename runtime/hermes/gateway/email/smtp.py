"""Mail out over SMTP (aiosmtplib): one connection per message, logged in.

Errors are translated for the messaging core's outbox: a refused login is
``AccessDenied`` when checking at connect time (and ``Disconnected`` later, so the
platform reconnects and finds out), no connection is ``Disconnected``, a temporary
refusal (4xx: a rate limit, a full queue) is retried with backoff, a permanent one
(5xx) drops that message (``Rejected``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from email.message import EmailMessage
from typing import Any

from hermes.config.platform_schema import EmailSettings
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.outbox import Disconnected, Rejected

TIMEOUT = 30.0


class Deferred(Exception):
    """The server refused the message for now (4xx); the outbox tries again later."""


class Outgoing:
    """The SMTP server answers leave through."""

    def __init__(self, settings: EmailSettings, password: str, key: str):
        self.settings = settings
        self.password = password
        self.key = key
        """Where the password is configured (``platforms.enabled.<name>.token``)."""

    async def check(self) -> None:
        """Log in once: a wrong password is found at start, not at the first answer."""
        import aiosmtplib

        try:
            async with self._session():
                pass
        except aiosmtplib.SMTPAuthenticationError as exc:
            raise AccessDenied(f"{self.settings.smtp_host} refused the login of "
                               f"{self._user} ({exc.code}) — check the password {self.key} "
                               "names") from None

    async def send(self, message: EmailMessage) -> None:
        import aiosmtplib

        try:
            async with self._session() as smtp:
                await smtp.send_message(message)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [refused.code for refused in exc.recipients]
            _refused(min(codes, default=550), "; ".join(r.message for r in exc.recipients))
        except aiosmtplib.SMTPAuthenticationError as exc:
            raise Disconnected(f"SMTP login refused ({exc.code})") from None
        except aiosmtplib.SMTPResponseException as exc:
            _refused(exc.code, exc.message)
        except (aiosmtplib.SMTPServerDisconnected, aiosmtplib.SMTPTimeoutError, OSError) as exc:
            raise Disconnected(f"SMTP: {type(exc).__name__}: {exc}") from None

    @property
    def _user(self) -> str:
        return self.settings.username or self.settings.address

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[Any]:
        import aiosmtplib

        settings = self.settings
        smtp = aiosmtplib.SMTP(hostname=settings.smtp_host, port=settings.smtp_port,
                               use_tls=settings.smtp_tls == "ssl",
                               start_tls=settings.smtp_tls == "starttls", timeout=TIMEOUT)
        try:
            await smtp.connect()
            await smtp.login(self._user, self.password)
        except (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected,
                aiosmtplib.SMTPTimeoutError, OSError) as exc:
            raise Disconnected(f"SMTP {settings.smtp_host}:{settings.smtp_port}: "
                               f"{type(exc).__name__}: {exc}") from None
        try:
            yield smtp
        finally:
            with contextlib.suppress(Exception):  # the message is sent; a rude close is fine
                await smtp.quit()


def _refused(code: int, message: str) -> None:
    if 400 <= code < 500:
        raise Deferred(f"SMTP {code} {message}")
    raise Rejected(f"SMTP {code} {message}")
