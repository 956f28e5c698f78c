"""``kind: signal``: a Signal account served by a ``signal-cli`` daemon (JSON-RPC over HTTP)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from hermes.config.platform_schema import MessagingSettings
from hermes.config.sections import NonBlank

KIND = "signal"
ADAPTER = "hermes.gateway.signal.platform:SignalPlatform"
CHECK_TIMEOUT = 5.0
"""Seconds ``hermes doctor`` waits for the daemon."""
PHONE = re.compile(r"\+[1-9]\d{6,14}")
"""A phone number in international (E.164) form."""


def _daemon_url(url: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
        raise PydanticCustomError("url", "not an http(s) URL; e.g. http://127.0.0.1:8080")
    return url.rstrip("/")


def _phone(number: str) -> str:
    if not PHONE.fullmatch(number):
        raise PydanticCustomError("phone", "not a phone number in international form; e.g. "
                                  "+15551234567")
    return number


class Settings(MessagingSettings):
    """``kind: signal``: the agent's Signal account, registered (or linked) in
    ``signal-cli`` and served by its daemon (``signal-cli -a +NUMBER daemon --http
    127.0.0.1:8080``). No token: the daemon holds the account's keys, so keep it on
    loopback. ``allowed_users`` are phone numbers (``+15551234567``) or account ids (ACI
    uuids, for people who hide their number)."""

    account: Annotated[NonBlank, AfterValidator(_phone)]
    """The agent's number, e.g. ``+15551234567``."""
    url: Annotated[NonBlank, AfterValidator(_daemon_url)] = "http://127.0.0.1:8080"
    """The daemon's HTTP endpoint (JSON-RPC on ``/api/v1/rpc``, events on
    ``/api/v1/events``)."""
    require_mention: bool = True
    """In groups, answer only messages that mention the agent or quote it; direct
    messages are always answered."""


def check(token: str | None, settings: Settings) -> tuple[bool, str]:
    """``hermes doctor``: the daemon through one JSON-RPC ``version`` call; whether it
    answered, and its version (standard library only)."""
    import json
    import urllib.error
    import urllib.request

    url = f"{settings.url}/api/v1/rpc"
    body = json.dumps({"jsonrpc": "2.0", "method": "version", "id": "doctor"}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "User-Agent": "hermes-doctor"})
    try:
        with urllib.request.urlopen(request, timeout=CHECK_TIMEOUT) as response:  # noqa: S310
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return False, f"{url}: HTTP {exc.code} — is it a signal-cli daemon (--http)?"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, (f"{url}: {getattr(exc, 'reason', exc)} — start the daemon: signal-cli "
                       f"-a {settings.account} daemon --http {settings.url.split('://')[1]}")
    version = (answer.get("result") or {}).get("version") if isinstance(answer, dict) else None
    if not version:
        return False, f"{url}: not a JSON-RPC answer ({str(answer)[:100]})"
    return True, f"{settings.account} via signal-cli {version} at {settings.url}"
