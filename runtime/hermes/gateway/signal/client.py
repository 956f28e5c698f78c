"""The agent's side of a ``signal-cli`` daemon started with ``--http``: JSON-RPC 2.0 on
``POST /api/v1/rpc`` and the account's events as Server-Sent Events on ``GET
/api/v1/events`` (``event:receive`` with ``data:{"envelope": ..., "account": ...}``).

aiohttp is imported only here, when the platform starts. Answers are translated at this
boundary into what the messaging core acts on: ``RetryAfter`` (Signal's rate limit:
error code -5, or a recipient's ``RATE_LIMIT_FAILURE`` with its ``retryAfterSeconds``),
``Disconnected`` (the daemon does not answer) and ``Rejected`` (this message is refused
for good: an unknown recipient or group, an unregistered number).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from hermes.agent.attachments import ImageRefused
from hermes.gateway.images import too_large, unreadable
from hermes.gateway.messaging.aiohttp_errors import disconnected_on_errors
from hermes.gateway.messaging.outbox import Disconnected, Rejected, RetryAfter

JSON = dict[str, Any]
RATE_LIMIT = -5
"""signal-cli's JSON-RPC error code for Signal's rate limit."""
USER_ERROR = -1
"""signal-cli's code for a request that cannot be done as asked (a bad recipient)."""
DEFAULT_RETRY_AFTER = 4.0
PERMANENT = ("UNREGISTERED_FAILURE", "INVALID_RECIPIENT")
"""Per-recipient send results no retry helps."""


class SignalError(Exception):
    """A JSON-RPC error of the daemon (not a rate limit nor a refusal)."""


class SignalDaemon:
    """One account on one daemon (one aiohttp session, re-made after ``close``)."""

    def __init__(self, url: str, account: str):
        self.url = url.rstrip("/")
        self.account = account
        self._session: Any = None
        self._ids = itertools.count(1)
        self.last_event_id = ""
        """The id of the last event read: a stream opened again resumes after it."""

    async def call(self, method: str, **params: Any) -> Any:
        """The ``result`` of one JSON-RPC call (the account added to its params)."""
        payload = {"jsonrpc": "2.0", "method": method, "id": next(self._ids),
                   "params": {"account": self.account, **params}}
        with disconnected_on_errors(method):
            async with self._ensure_session().post(f"{self.url}/api/v1/rpc",
                                                   json=payload) as response:
                if response.status >= 500:
                    raise Disconnected(f"{method}: HTTP {response.status}")
                answer = await response.json(content_type=None)
        if not isinstance(answer, dict):
            raise SignalError(f"{method}: not a JSON-RPC answer")
        if answer.get("error"):
            _refuse(method, answer["error"])
        _check_results(method, answer.get("result"))
        return answer.get("result")

    async def send(self, chat: str, text: str, styles: list[str] | None = None) -> Any:
        """Send ``text`` to ``chat``, with Signal's ``start:length:STYLE`` ranges."""
        extra: JSON = {"textStyle": styles} if styles else {}
        return await self.call("send", message=text, **where(chat), **extra)

    async def send_file(self, chat: str, data: bytes, mime: str, name: str) -> Any:
        """Send one file to ``chat`` (a data URI, as signal-cli's JSON-RPC takes one)."""
        import base64

        uri = f"data:{mime};filename={name};base64,{base64.b64encode(data).decode('ascii')}"
        return await self.call("send", message="", attachments=[uri], **where(chat))

    async def typing(self, chat: str) -> None:
        await self.call("sendTyping", **where(chat))

    async def attachment(self, attachment_id: str, name: str, max_bytes: int) -> bytes:
        """An attachment's bytes (``getAttachment``: base64 in ``data``)."""
        try:
            result = await self.call("getAttachment", id=attachment_id)
            data = base64.b64decode(result["data"] if isinstance(result, dict) else result,
                                    validate=True)
        except (SignalError, Rejected, Disconnected, RetryAfter, KeyError, TypeError,
                binascii.Error) as exc:
            raise unreadable(name, "signal-cli", f"{type(exc).__name__}: {exc}") from None
        if len(data) > max_bytes:
            raise ImageRefused(too_large(name, max_bytes, len(data)))
        return data

    async def events(self) -> AsyncIterator[JSON]:
        """The ``receive`` events' data, as they come; ends (``ConnectionError``) when the
        stream is cut. A stream opened again asks for what it missed after the last event
        it read (``Last-Event-ID``: the daemon keeps its latest 1000); before the first
        event there is no id to ask after, and what came during a cut is not asked for."""
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id:
            headers["Last-Event-ID"] = self.last_event_id
        with disconnected_on_errors("events"):
            response = await self._ensure_session().get(
                f"{self.url}/api/v1/events", params={"account": self.account},
                headers=headers)
        try:
            if response.status != 200:
                raise ConnectionError(f"events: HTTP {response.status}")
            async for event in _server_sent(response.content):
                if event.kind in ("receive", "message") and event.data:
                    with contextlib.suppress(ValueError):
                        data = json.loads(event.data)
                        if isinstance(data, dict):
                            yield data
                self.last_event_id = event.id or self.last_event_id
        finally:
            response.release()
        raise ConnectionError("the event stream ended")

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _ensure_session(self) -> Any:
        import aiohttp

        if self._session is None:
            # the event stream stays open: no total timeout, only for connecting
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
                headers={"User-Agent": "hermes-runtime"})
        return self._session


def where(chat: str) -> JSON:
    """The params naming a chat: ``group.<id>`` is a group, anything else a person (a
    phone number or an account id)."""
    if chat.startswith("group."):
        return {"groupId": chat.removeprefix("group.")}
    return {"recipient": [chat]}


@dataclass
class ServerSentEvent:
    kind: str = "message"
    data: str = ""
    id: str = ""


async def _server_sent(content: Any) -> AsyncIterator[ServerSentEvent]:
    """Each Server-Sent Event of a response body."""
    event, lines = ServerSentEvent(), list[str]()
    async for raw in content:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if lines or event.id:
                event.data = "\n".join(lines)
                yield event
            event, lines = ServerSentEvent(), []
        elif not line.startswith(":"):  # a comment: a keep-alive
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event.kind = value
            elif name == "id":
                event.id = value
            elif name == "data":
                lines.append(value)


def _refuse(method: str, error: Any) -> None:
    error = error if isinstance(error, dict) else {"message": str(error)}
    message = f"{method}: {error.get('message') or 'refused'}"
    if error.get("code") == RATE_LIMIT or "[429]" in message:
        raise RetryAfter(_retry_after(error.get("data")), message)
    if error.get("code") in (USER_ERROR, -32602):  # a bad recipient or parameter
        raise Rejected(message)
    raise SignalError(message)


def _check_results(method: str, result: Any) -> None:
    """A send's per-recipient results: rate limited, or refused for good."""
    results = result.get("results") if isinstance(result, dict) else None
    for entry in results if isinstance(results, list) else []:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "RATE_LIMIT_FAILURE":
            raise RetryAfter(float(entry.get("retryAfterSeconds") or DEFAULT_RETRY_AFTER))
        if kind in PERMANENT:
            raise Rejected(f"{method}: {kind}")
        if kind not in (None, "SUCCESS"):
            raise SignalError(f"{method}: {kind}")


def _retry_after(data: Any) -> float:
    results = ((data or {}).get("response") or {}).get("results") \
        if isinstance(data, dict) else None
    for entry in results if isinstance(results, list) else []:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            return float(entry["retryAfterSeconds"])
    return DEFAULT_RETRY_AFTER
