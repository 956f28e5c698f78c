"""What a background learning review learned, told to the chat it reviewed.

After a turn the runtime may review the conversation (``hermes.learning``) and save a
memory or a skill. The CLI prints one line when that ends; a chat gets that line
(``learned: skill deploy-site updated``) only when its platform's
``settings.announce_learning`` is on. It is off by default: a group's members did not
ask to hear about the agent's notes, and a line per review is noise in a busy chat.
The line goes after the answer of the turn that started the review (and any queued
behind it), so it never lands between a question and its answer.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hermes.gateway.base import MessageSource, PlatformAdapter

Quiet = Callable[[str], Awaitable[None]]
"""Waits until a conversation (by session key) has no turn running or queued."""


class LearnedLines:
    """Sends "learned: ..." to the chats of announcing platforms when their review ends."""

    def __init__(self, learning: Any, adapters: Mapping[str, PlatformAdapter], quiet: Quiet):
        self._learning = learning
        self._adapters = adapters
        self._quiet = quiet
        self._chats: dict[str, tuple[str, MessageSource, asyncio.AbstractEventLoop]] = {}
        """By session key: the conversation's session id, where it is, the gateway's loop."""
        self._lock = threading.Lock()  # tracked from turn threads, read from review threads
        self._listening = False

    def track(self, key: str, session_id: str, source: MessageSource,
              loop: asyncio.AbstractEventLoop) -> None:
        """Remember where session ``session_id`` is answered, if its platform announces."""
        if not announces(self._adapters.get(source.platform)):
            return
        with self._lock:
            self._chats[key] = (session_id, source, loop)
            if not self._listening:  # the service lives as long as the profile's runtime
                self._learning.subscribe(self._heard)
                self._listening = True

    def _heard(self, outcome: Any) -> None:
        """A review ended (called on its thread)."""
        summary = outcome.summary()
        with self._lock:
            found = next(((key, source, loop) for key, (session_id, source, loop)
                          in self._chats.items() if session_id == outcome.session_id), None)
        if summary is None or found is None:
            return
        key, source, loop = found
        if not loop.is_closed():  # else the gateway has stopped: nobody to tell
            asyncio.run_coroutine_threadsafe(self._say(key, source, f"learned: {summary}"),
                                             loop)

    async def _say(self, key: str, source: MessageSource, line: str) -> None:
        await self._quiet(key)
        adapter = self._adapters.get(source.platform)
        if adapter is not None:
            await adapter.send(source, line)


def announces(adapter: PlatformAdapter | None) -> bool:
    """Whether ``adapter``'s platform has ``settings.announce_learning`` on."""
    config = getattr(adapter, "config", None)
    return bool(getattr(getattr(config, "settings", None), "announce_learning", False))
