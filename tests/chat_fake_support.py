"""What the fakes of chat services (tests/fake_mattermost, tests/fake_signal) and their
tests share: an aiohttp server on loopback run by its own event loop thread (restartable
on the same port), and the fake LLM's scripted answers of a chat conversation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web

from fakellm import RecordedRequest, Reply, ToolCall


class LoopServer:
    """An aiohttp application served on ``127.0.0.1`` from a thread of its own; a
    subclass adds its routes in ``routes`` and may close what it holds in ``closing``."""

    def __init__(self) -> None:
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    async def closing(self) -> None:
        """Before the server stops: end open streams and sockets."""

    def start(self) -> Any:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        self._loop = loop
        self.run(self._serve())
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        self.run(self._shutdown())
        loop.call_soon_threadsafe(loop.stop)
        self._loop = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def run(self, coroutine: Any) -> Any:
        """Run ``coroutine`` on the server's loop; its result."""
        assert self._loop is not None, "start() first"
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)

    async def _serve(self) -> None:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _shutdown(self) -> None:
        await self.closing()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class Scripted:
    """The fake LLM's answers, by what the user said: ``delete PATH`` asks for ``rm -rf
    PATH`` (then reports the tool's answer), ``slow`` waits for ``hold``, ``long answer``
    is ``long``, a cron job's prompt is answered ``Done: <its line>``, anything else
    ``re: <text>``."""

    def __init__(self, long: str) -> None:
        self.long = long
        self.hold = threading.Event()
        self.hold.set()

    def __call__(self, request: RecordedRequest) -> Reply:
        text = request.last_user_text or ""
        if "delete " in text:
            if not request.tool_results:
                target = text.split("delete ", 1)[1].split()[0]
                return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {target}"})])
            return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:80]}")
        if "slow" in text:
            self.hold.wait(60)
        if "long answer" in text:
            return Reply(text=self.long)
        if "[SILENT]" in text:  # a cron job's prompt: its own line is the last
            return Reply(text=f"Done: {text.splitlines()[-1]}")
        return Reply(text=f"re: {text}")
