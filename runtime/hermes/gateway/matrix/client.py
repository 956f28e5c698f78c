"""The agent's Matrix account, over mautrix's client API: log in, sync, join, send.

mautrix (and aiohttp under it) is imported only here, when the platform starts. Its
errors are translated at this boundary into what the messaging core acts on:
``AccessDenied`` (a rejected token or password, or an address where the login gets a
4xx other than 429: no retry helps; a 5xx or no answer is retried), ``RetryAfter`` (the
homeserver's rate limit, 429 with ``Retry-After``), ``Disconnected`` (no connection)
and ``Rejected`` (the homeserver refuses this message for good).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from hermes.agent.attachments import ImageRefused
from hermes.gateway.images import read_capped, too_large, unreadable
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter

JSON = dict[str, Any]
SYNC_FILTER = json.dumps({"presence": {"not_types": ["*"]},
                          "account_data": {"not_types": ["*"]},
                          "room": {"ephemeral": {"not_types": ["*"]},
                                   "timeline": {"limit": 50}}})
"""Only room messages and membership: presence, typing and receipts are of no use here."""
DEFAULT_RETRY_AFTER = 5.0
CHUNK = 64 * 1024
"""Bytes read at a time from a media download (its size is counted as it comes)."""
_retry_after: ContextVar[float | None] = ContextVar("matrix_retry_after", default=None)
"""The ``Retry-After`` of the last 429 answered to the current task: mautrix's error for a
429 drops the response, so an aiohttp trace hook keeps what the homeserver asked for."""


@dataclass(frozen=True)
class Credentials:
    """How the account logs in: an access token, or a user id and password."""

    homeserver: str
    token: str | None
    user_id: str
    password: str | None
    device_id: str
    key: str
    """Where they are configured (``platforms.enabled.<name>``), for the fix."""


class MatrixAccount:
    """One logged-in account on one homeserver (one aiohttp session, re-used)."""

    def __init__(self, credentials: Credentials, sync_timeout: int):
        self.credentials = credentials
        self.sync_timeout = sync_timeout
        self.user_id = ""
        self._client: Any = None

    async def login(self) -> str:
        """Check the token (or log in with the password); the account's user id."""
        from mautrix.errors import MatrixRequestError, MForbidden, MLimitExceeded, MUnknownToken

        client = self._ensure_client()
        creds = self.credentials
        with _translated("log in"):
            try:
                if creds.password is not None and not client.api.token:
                    await client.login(identifier=creds.user_id, password=creds.password,
                                       device_id=creds.device_id, device_name="Hermes")
                who = await client.whoami()
            except MUnknownToken:
                if creds.password is None:
                    raise AccessDenied(f"{creds.homeserver} rejected the access token — "
                                       f"check the secret {creds.key}.token names") from None
                client.api.token = ""  # it expired: the next attempt logs in again
                raise Disconnected("the access token expired; logging in again") from None
            except MForbidden as exc:
                raise AccessDenied(f"{creds.homeserver} refused the login of {creds.user_id}"
                                   f" ({exc.message}) — check the secret "
                                   f"{creds.key}.settings.password names") from None
            except MatrixRequestError as exc:
                if exc.http_status >= 500 or isinstance(exc, MLimitExceeded):
                    raise  # down or busy: tried again
                # any other refusal (a 404 from a wrong address) is the settings' fault
                answer = f"HTTP {exc.http_status} {exc.errcode or ''}".strip()
                raise AccessDenied(f"{creds.homeserver} refused the login ({answer}) — check "
                                   f"{creds.key}.settings.homeserver") from None
        if creds.user_id and who.user_id != creds.user_id:
            raise AccessDenied(f"the access token belongs to {who.user_id}, not "
                               f"{creds.user_id} — fix settings.user_id or the token")
        self.user_id = str(who.user_id)
        return self.user_id

    async def sync(self, since: str | None, timeout: int) -> JSON:
        with _translated("sync"):
            return dict(await self._client.sync(since=since, timeout=timeout * 1000,
                                                filter_id=SYNC_FILTER))

    async def join(self, room_id: str) -> None:
        with _translated("join"):
            await self._client.join_room_by_id(room_id)

    async def leave(self, room_id: str) -> None:
        with _translated("leave"):
            await self._client.leave_room(room_id)

    async def send(self, room_id: str, content: JSON) -> str:
        """Send a message event; its event id."""
        from mautrix.types import EventType

        with _translated("send"):
            event_id = await self._client.send_message_event(
                room_id, EventType.ROOM_MESSAGE, content, txn_id=uuid.uuid4().hex)
        return str(event_id)

    async def upload(self, data: bytes, mime: str, name: str) -> str:
        """``data`` into the homeserver's media repository; its ``mxc://`` URI."""
        with _translated("upload"):
            return str(await self._client.upload_media(data, mime_type=mime, filename=name,
                                                       size=len(data)))

    async def typing(self, room_id: str, seconds: float) -> None:
        with _translated("typing"):
            await self._client.set_typing(room_id, timeout=int(seconds * 1000))

    async def member_count(self, room_id: str) -> int:
        with _translated("members"):
            return len(await self._client.get_joined_members(room_id))

    async def download(self, mxc: str, name: str, max_bytes: int) -> bytes:
        """Media ``mxc`` from the homeserver's repository (the authenticated endpoint where
        it has one), refused once past ``max_bytes``."""
        import aiohttp
        from mautrix.errors import MatrixError
        from mautrix.types import SpecVersions

        client = self._client
        if client is None:
            raise unreadable(name, "the homeserver", "not connected")
        try:
            authenticated = (await client.versions()).supports(SpecVersions.V111)
            url = client.api.get_download_url(mxc, authenticated=authenticated)
            headers = {"Authorization": f"Bearer {client.api.token}"} if authenticated else {}
            async with client.api.session.get(url, headers=headers,
                                              params={"allow_redirect": "true"}) as response:
                if response.status != 200:
                    raise unreadable(name, "the homeserver", f"HTTP {response.status}")
                if response.content_length is not None and response.content_length > max_bytes:
                    raise ImageRefused(too_large(name, max_bytes, response.content_length))
                return await read_capped(response.content.iter_chunked(CHUNK), max_bytes, name)
        except (MatrixError, aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            raise unreadable(name, "the homeserver", f"{type(exc).__name__}: {exc}") from None

    async def display_name(self) -> str:
        try:
            return str(await self._client.get_displayname(self.user_id) or "")
        except Exception:  # noqa: BLE001 - a nicety: mentions by user id work without it
            return ""

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.api.session.close()

    def _ensure_client(self) -> Any:
        if self._client is None:
            self._client = _make_client(self.credentials, self.sync_timeout)
        return self._client


def _make_client(credentials: Credentials, sync_timeout: int) -> Any:
    import aiohttp
    from mautrix.api import HTTPAPI
    from mautrix.client.api import ClientAPI
    from mautrix.types import DeviceID, UserID

    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(_note_retry_after)
    # a sync holds the request open for sync_timeout seconds: read timeouts leave room
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=sync_timeout + 30)
    session = aiohttp.ClientSession(timeout=timeout, trace_configs=[trace],
                                    headers={"User-Agent": "hermes-runtime"})
    api = HTTPAPI(credentials.homeserver, credentials.token or "", client_session=session,
                  default_retry_count=0)  # the messaging core retries, with backoff
    return ClientAPI(UserID(credentials.user_id), DeviceID(credentials.device_id), api=api)


async def _note_retry_after(session: Any, context: Any, params: Any) -> None:
    if params.response.status == 429:
        _retry_after.set(_seconds(params.response.headers.get("Retry-After")))


def _seconds(header: str | None) -> float | None:
    try:
        return max(float(header), 0.0) if header is not None else None
    except ValueError:
        return None


@contextlib.contextmanager
def _translated(action: str) -> Iterator[None]:
    """mautrix's and aiohttp's errors as the messaging core's."""

    import aiohttp
    from mautrix.errors import (
        MatrixConnectionError,
        MatrixRequestError,
        MForbidden,
        MLimitExceeded,
        MNotFound,
    )

    _retry_after.set(None)
    try:
        yield
    except MLimitExceeded:
        raise RetryAfter(_retry_after.get() or DEFAULT_RETRY_AFTER) from None
    except (MForbidden, MNotFound) as exc:
        raise Rejected(f"{action}: {exc.errcode} {exc.message}") from None
    except (TimeoutError, MatrixConnectionError, aiohttp.ClientError, OSError) as exc:
        raise Disconnected(f"{action}: {type(exc).__name__}: {exc}") from None
    except MatrixRequestError as exc:
        if exc.http_status >= 500:  # the homeserver (or its proxy) is down or restarting
            raise Disconnected(f"{action}: HTTP {exc.http_status}") from None
        raise
