"""``hermes doctor``'s credential checks of the platform kinds declared in
``platform_schema`` (the newer kinds carry theirs in ``hermes.config.platform_kinds``): one
cheap call each, standard library only (doctor imports no platform SDK). A token travels
in Telegram's URLs: no message here shows a URL with it."""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from typing import Any

TIMEOUT = 10.0
"""Seconds one check may take."""


def telegram(token: str | None, settings: Any) -> tuple[bool, str]:
    """``getMe`` with the bot token."""
    if not token:
        return False, "no bot token: `hermes config set TELEGRAM_BOT_TOKEN 123456:ABC…`"
    try:
        answer = _json(urllib.request.Request(f"{settings.base_url.rstrip('/')}/bot{token}"
                                              "/getMe"))
    except urllib.error.HTTPError as exc:
        said = _described(exc, "description")
        return False, f"getMe: Telegram answered {exc.code} {said} — check TELEGRAM_BOT_TOKEN"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, f"{settings.base_url}: {_reason(exc)}"
    return True, f"bot @{(answer.get('result') or {}).get('username', '?')}"


def matrix(token: str | None, settings: Any) -> tuple[bool, str]:
    """``/account/whoami`` with the access token (a password login is checked when the
    gateway logs in: a login here would make a device)."""
    if not token:
        return True, "not checked: a password login (its first sync says)"
    request = urllib.request.Request(
        f"{settings.homeserver}/_matrix/client/v3/account/whoami",
        headers={"Authorization": f"Bearer {token}"})
    try:
        answer = _json(request)
    except urllib.error.HTTPError as exc:
        said = _described(exc, "errcode")
        return False, (f"whoami: the homeserver answered {exc.code} {said} — check "
                       "MATRIX_ACCESS_TOKEN")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, f"{settings.homeserver}: {_reason(exc)}"
    user = str(answer.get("user_id", "?"))
    if settings.user_id and user != settings.user_id:
        return False, f"the token is {user}'s, not settings.user_id {settings.user_id}'s"
    return True, f"{user} on {settings.homeserver}"


def email(token: str | None, settings: Any) -> tuple[bool, str]:
    """An IMAP login (and logout) with the mailbox's password."""
    import imaplib
    import ssl

    user = settings.username or settings.address
    if not token:
        return False, "no password: `hermes config set EMAIL_PASSWORD …`"
    where = f"{settings.imap_host}:{settings.imap_port}"
    try:
        if settings.imap_tls == "ssl":
            client: imaplib.IMAP4 = imaplib.IMAP4_SSL(
                settings.imap_host, settings.imap_port,
                ssl_context=ssl.create_default_context(), timeout=TIMEOUT)
        else:
            client = imaplib.IMAP4(settings.imap_host, settings.imap_port, timeout=TIMEOUT)
        try:
            client.login(user, token)
        finally:
            _logout(client)
    except imaplib.IMAP4.error:
        return False, f"IMAP {where} refused the login of {user} — check EMAIL_PASSWORD"
    except (OSError, ssl.SSLError) as exc:
        return False, f"IMAP {where}: {_reason(exc)}"
    return True, f"{user} logged in to IMAP {where}"


CHECKS = {"telegram": telegram, "matrix": matrix, "email": email}
"""The first kinds' checks, by kind."""


def _json(request: urllib.request.Request) -> dict[str, Any]:
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
        answer = json.loads(response.read())
    if not isinstance(answer, dict):
        raise ValueError("not a JSON object")
    return answer


def _described(exc: urllib.error.HTTPError, key: str) -> str:
    try:
        return str(json.loads(exc.read()).get(key) or exc.reason)
    except (ValueError, AttributeError, OSError):
        return str(exc.reason)


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
    return str(reason)


def _logout(client: Any) -> None:
    """Say goodbye; a failed one changes nothing (the answer is known)."""
    with contextlib.suppress(Exception):
        client.logout()
