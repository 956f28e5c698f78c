"""``BrowserLoop``: the one thread where Playwright's asyncio objects live."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BrowserLoop:
    """An event loop on a daemon thread of its own, started on first use; ``run`` waits
    for a coroutine from any thread (never from the loop's own)."""

    def __init__(self, name: str = "hermes-browser") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or not self.running:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=_forever, args=(loop,), name=self._name,
                                          daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """The coroutine's result; ``TimeoutError`` after ``timeout`` seconds (the
        coroutine is cancelled)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._started())
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def stop(self) -> None:
        """End the thread (idempotent); what is still scheduled is dropped."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()


def _forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()
