"""The agent's mailbox over IMAP (aioimaplib): new mail in, marked read once taken.

``Inbox.wait`` returns when there may be new mail: with IDLE, as soon as the server
announces it (or when the IDLE is renewed); without, after ``poll_interval``. A lost
connection raises ``Disconnected`` from any call, so the platform reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from typing import Any

from hermes.config.platform_schema import EmailSettings
from hermes.gateway.messaging.connection import AccessDenied
from hermes.gateway.messaging.outbox import Disconnected

TIMEOUT = 30.0
"""Seconds any IMAP command may take."""


class TooLarge(Exception):
    """A message over ``settings.max_bytes``: marked read and left in the mailbox."""


class Inbox:
    """One IMAP connection to the agent's mailbox."""

    def __init__(self, settings: EmailSettings, password: str, key: str):
        self.settings = settings
        self.password = password
        self.key = key
        """Where the password is configured (``platforms.enabled.<name>.token``)."""
        self.idle = False
        """The server announces new mail (IDLE); else it is polled."""
        self._imap: Any = None
        self._lost = asyncio.Event()

    async def open(self) -> None:
        """Connect, log in and select the mailbox."""
        import aioimaplib

        settings = self.settings
        self._lost.clear()
        context = ssl.create_default_context() if settings.imap_tls == "ssl" else None
        self._imap = aioimaplib.IMAP4(settings.imap_host, settings.imap_port, timeout=TIMEOUT,
                                      conn_lost_cb=lambda _exc: self._lost.set(),
                                      ssl_context=context)
        await self._call("connect", self._imap.wait_hello_from_server())
        user = settings.username or settings.address
        if (await self._call("login", self._imap.login(user, self.password))).result != "OK":
            raise AccessDenied(f"{settings.imap_host} refused the login of {user} — check "
                               f"the password {self.key} names")
        selected = await self._call("select", self._imap.select(settings.mailbox))
        if selected.result != "OK":
            raise AccessDenied(f"{settings.imap_host} has no mailbox {settings.mailbox!r} for "
                               f"{user} — fix settings.mailbox")
        # what the server offers after login (before it, dovecot lists IDLE regardless)
        await self._call("capability", self._imap.protocol.capability())
        self.idle = self._imap.has_capability("IDLE")

    async def unseen(self) -> list[str]:
        """UIDs of the messages not read yet, oldest first."""
        found = await self._call("search", self._imap.uid_search("UNSEEN"))
        _ok(found, "search")
        return [uid for line in found.lines[:1] for uid in bytes(line).decode().split()
                if uid.isdigit()]

    async def take(self, uid: str) -> bytes | None:
        """Message ``uid``'s bytes, then marked read (before anyone answers it, so it is
        answered once); None when it is gone, ``TooLarge`` past ``settings.max_bytes``."""
        sized = await self._call("size", self._imap.uid("fetch", uid, "(RFC822.SIZE)"))
        _ok(sized, "fetch")
        size = _size(sized.lines)
        if size is None or size > self.settings.max_bytes:
            await self._seen(uid)
            if size is None:
                return None
            raise TooLarge(f"{size} bytes")
        fetched = await self._call("fetch", self._imap.uid("fetch", uid, "(BODY.PEEK[])"))
        _ok(fetched, "fetch")
        await self._seen(uid)
        return next((bytes(line) for line in fetched.lines if isinstance(line, bytearray)),
                    None)

    async def _seen(self, uid: str) -> None:
        stored = await self._call("store", self._imap.uid("store", uid, "+FLAGS", r"(\Seen)"))
        _ok(stored, "store")

    async def wait(self) -> None:
        """Return when there may be new mail."""
        if not self.idle:
            await self._race(asyncio.sleep(self.settings.poll_interval))
            await self._call("noop", self._imap.noop())
            return
        idle = await self._call("idle", self._imap.idle_start(self.settings.idle_timeout))
        try:
            await self._call("idle", self._imap.wait_server_push(
                self.settings.idle_timeout + TIMEOUT))  # renewed at idle_timeout: else dead
        finally:
            if self._imap.has_pending_idle():
                self._imap.idle_done()
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(idle, TIMEOUT)

    async def close(self) -> None:
        imap, self._imap = self._imap, None
        if imap is not None:
            with contextlib.suppress(Exception):  # the server may be gone already
                await asyncio.wait_for(imap.logout(), 5)
            transport = imap.protocol.transport
            if transport is not None:
                transport.close()

    async def _call(self, what: str, call: Any) -> Any:
        """``call``, or ``Disconnected`` when the connection fails or is lost meanwhile."""
        import aioimaplib

        try:
            return await self._race(call)
        except (TimeoutError, OSError, aioimaplib.AioImapException) as exc:
            raise Disconnected(f"IMAP {what}: {type(exc).__name__}: {exc}") from None

    async def _race(self, call: Any) -> Any:
        task = asyncio.ensure_future(call)
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({task, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
        if not task.done():
            task.cancel()
            raise Disconnected(f"the connection to {self.settings.imap_host} was lost")
        return task.result()


def _ok(response: Any, what: str) -> None:
    if response.result != "OK":
        raise Disconnected(f"IMAP {what} failed: {response.result} {response.lines[-1:]}")


def _size(lines: list[Any]) -> int | None:
    for line in lines:
        found = re.search(rb"RFC822\.SIZE (\d+)", bytes(line))
        if found:
            return int(found[1])
    return None
