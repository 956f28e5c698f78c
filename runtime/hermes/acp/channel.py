"""The agent's threads talking to the editor: ordered updates and awaited requests.

The ACP connection lives on one asyncio loop; the agent runs its turns, model calls
and tools in threads. ``UpdateChannel`` takes updates from any thread without
blocking it and sends them one after another, in the order they were posted (a
tool call's start before its end, text in order). ``Bridge.call`` runs one request
to the editor (a permission, a file) on the loop and waits for its answer on the
calling thread, giving up when the turn is interrupted or the time runs out.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from acp import Client

T = TypeVar("T")
POLL_SECONDS = 0.05
"""How often a waiting thread checks whether its turn was interrupted."""
log = logging.getLogger(__name__)


class Interrupted(Exception):
    """The turn was interrupted while its thread waited for the editor."""


@dataclass(frozen=True)
class Bridge:
    """The connection's loop and its client side, as the agent's threads reach them."""

    loop: asyncio.AbstractEventLoop
    client: Client

    def call(self, request: Callable[[Client], Coroutine[Any, Any, T]], *,
             cancelled: Callable[[], bool] = lambda: False,
             timeout: float | None = None) -> T:
        """Run ``request(client)`` on the loop; its result on this thread. Raises
        ``Interrupted`` once ``cancelled()``, ``TimeoutError`` after ``timeout``
        seconds, and whatever the request raised (the editor's error)."""
        future = asyncio.run_coroutine_threadsafe(request(self.client), self.loop)
        deadline = None if timeout is None else self.loop.time() + timeout
        while True:
            try:
                return future.result(POLL_SECONDS)
            except concurrent.futures.TimeoutError:
                if cancelled():
                    future.cancel()
                    raise Interrupted() from None
                if deadline is not None and self.loop.time() > deadline:
                    future.cancel()
                    raise TimeoutError(f"no answer within {timeout:g} s") from None


class UpdateChannel:
    """One session's updates to the editor, sent in order. Make it on the loop."""

    def __init__(self, bridge: Bridge, session_id: str):
        self._bridge = bridge
        self.session_id = session_id
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._sender = bridge.loop.create_task(self._send_all())

    def post(self, update: Any) -> None:
        """Queue ``update`` from any thread; never blocks. Dropped once the loop is gone."""
        loop = self._bridge.loop
        if _running_loop() is loop:  # queued now, so a ``drain`` right after waits for it
            self._queue.put_nowait(update)
            return
        with contextlib.suppress(RuntimeError):  # the connection closed: nobody listens
            loop.call_soon_threadsafe(self._queue.put_nowait, update)

    async def drain(self) -> None:
        """Return once every update posted so far is sent."""
        await self._queue.join()

    def drain_from_thread(self) -> None:
        """``drain`` for one of the agent's threads (before it asks the editor something,
        so the question never overtakes the tool call it is about)."""
        asyncio.run_coroutine_threadsafe(self.drain(), self._bridge.loop).result()

    def close(self) -> None:
        self._sender.cancel()

    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._bridge.client.session_update(session_id=self.session_id,
                                                         update=update)
            except Exception:  # a client gone or refusing one update: keep the rest going
                log.warning("could not send a session update", exc_info=True)
            finally:
                self._queue.task_done()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # one of the agent's threads
        return None
