"""``Tab``: one session's browser context, its current page and what happened there
since the last tool result (dialogs, new windows, downloads, refused requests)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.browser.snapshot import Snapshot
from hermes.errors import ToolError
from hermes.tools.context import ToolContext

CONSOLE_KEPT = 200
"""Console lines and page errors kept per session."""


@dataclass
class Tab:
    """What a session's browser tools work on; used on the browser thread only."""

    session_id: str
    context: Any
    release: Callable[[], Any]
    client: str = ""
    """The context's name at the guard proxy (whose refusals are this session's)."""
    page: Any = None
    snapshot: Snapshot | None = None
    last_used: float = field(default_factory=time.monotonic)
    ctx: ToolContext | None = None
    """The context of the latest call (where downloads go)."""
    notes: list[str] = field(default_factory=list)
    """Events to report in the next result."""
    console: deque[str] = field(default_factory=lambda: deque(maxlen=CONSOLE_KEPT))
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    closing: set[asyncio.Task[Any]] = field(default_factory=set)
    """Stuck windows still closing (``tools.close_stuck``), kept until they have."""
    opening: bool = False
    downloads: int = 0
    """Downloads begun so far."""
    """True while we open a page ourselves (not a window the page opened)."""
    route_guard: Any = None
    """The request checker of a browser that does not go through the guard proxy."""

    # -- events ------------------------------------------------------------------------

    async def watch_context(self) -> None:
        self.context.on("page", self._on_new_page)
        await self.context.add_init_script(COUNT_OPENED)
        await self.context.route("file://**", self._guard_file)

    async def _guard_file(self, route: Any) -> None:
        """A file a page loads (a frame, a link it follows, a script's location) is one the
        session's sandbox reads, like browser_navigate's; Chromium lets any file page open
        any file (the Hermes root, /proc/self/environ) otherwise."""
        from hermes.browser.guard import check_file_url

        url = route.request.url
        try:
            if self.ctx is None:
                raise ToolError(f"{url}: no session to judge the file by")
            await asyncio.to_thread(check_file_url, url, self.ctx)
        except ToolError as exc:
            self.notes.append(f"refused: {str(exc).split(';', 1)[0]}")
            await route.abort("accessdenied")
            return
        await route.continue_()

    async def adopt_opened(self, timeout: float = 5.0) -> None:
        """After an action: when the page opened a window or started a download (a link
        with ``download``), wait until the window is ours and the download began."""
        page = self.page
        if page is None or page.is_closed():
            return
        downloads = self.downloads
        try:
            opened, downloading = await page.evaluate(TAKE_COUNTS)
        except Exception:  # navigated away meanwhile
            return
        if opened and self.page is page:
            with contextlib.suppress(Exception):
                await self.context.wait_for_event("page", timeout=timeout * 1000)
        deadline = time.monotonic() + timeout
        while downloading and self.downloads == downloads and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def watch(self, page: Any) -> None:
        page.on("dialog", lambda dialog: self._spawn(self._on_dialog(dialog)))
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console.append(f"[pageerror] {error}"))
        page.on("download", lambda download: self._spawn(self._on_download(download)))
        page.on("close", lambda closed: self._on_close(closed))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    def _on_new_page(self, page: Any) -> None:
        if page is self.page or self.opening:
            return
        self.watch(page)
        self.page, self.snapshot = page, None
        self.notes.append(f"a new window opened ({page.url or 'about:blank'}); it is now "
                          "the current page")

    def _on_close(self, page: Any) -> None:
        if page is not self.page:
            return
        others = [p for p in self.context.pages if p is not page and not p.is_closed()]
        self.page, self.snapshot = (others[-1] if others else None), None
        if others:
            self.notes.append(f"the window closed; back on {self.page.url}")

    def _on_console(self, message: Any) -> None:
        self.console.append(f"[{message.type}] {message.text}")

    async def _on_dialog(self, dialog: Any) -> None:
        kind, text = dialog.type, dialog.message
        try:
            if kind == "prompt":
                await dialog.accept(dialog.default_value)
                how = f"answered with {dialog.default_value!r}"
            else:
                await dialog.accept()
                how = "accepted"
        except Exception:  # the page went away meanwhile
            return
        article = "an" if kind[0] in "aeiou" else "a"
        self.notes.append(f"{article} {kind} dialog said {text!r}; {how}")

    async def _on_download(self, download: Any) -> None:
        self.downloads += 1
        name = download.suggested_filename or "download"
        try:
            source = await download.path()
            saved = await asyncio.to_thread(save_download, self.ctx, name, source)
            self.notes.append(f"downloaded {name} to {saved}")
        except Exception as exc:
            self.notes.append(f"download {name} refused: {exc}")
        finally:
            with contextlib.suppress(Exception):  # the context closed meanwhile
                await download.delete()

    # -- the current page --------------------------------------------------------------

    async def current(self) -> Any:
        """The page to act on (a new one when every window was closed)."""
        if self.page is None or self.page.is_closed():
            self.opening = True
            try:
                self.page = await self.context.new_page()
            finally:
                self.opening = False
            self.watch(self.page)
            self.snapshot = None
        return self.page

    async def close_stuck(self) -> None:
        """Close the window an action timed out on: a page that keeps its renderer busy
        (a million nodes, a script in a loop) would make every later call time out too.
        Waits at most 5 s; the close goes on after that if it must."""
        page, self.page, self.snapshot = self.page, None, None
        if page is None:
            return
        closing = asyncio.ensure_future(page.close(run_before_unload=False))
        self.closing.add(closing)
        closing.add_done_callback(self._closed)
        # Not asyncio.wait_for: on its timeout it cancels the close and then waits for
        # it to end, which a renderer busy for long does not let happen.
        await asyncio.wait({closing}, timeout=5)

    def _closed(self, task: asyncio.Task[Any]) -> None:
        self.closing.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a failed close is no one's error

    async def settle(self) -> None:
        """Let event handlers (dialogs, downloads) that started finish."""
        if self.pending:
            await asyncio.wait(list(self.pending), timeout=5)

    def take_notes(self) -> list[str]:
        taken, self.notes = self.notes, []
        return taken

    async def locate(self, ref: str) -> Any:
        """The element ``ref`` of the last snapshot (an ElementHandle: its actions keep
        Playwright's actionability checks), or ``ToolError`` saying what to do."""
        ref = ref.strip().removeprefix("ref=").strip("[]")
        page = await self.current()
        if self.snapshot is None or ref not in self.snapshot.refs:
            raise ToolError(f"no element {ref} in the last snapshot; take a new "
                            "browser_snapshot")
        from hermes.browser.snapshot_js import RESOLVE

        handle = (await page.evaluate_handle(RESOLVE, ref)).as_element()
        frame = handle and await handle.owner_frame()
        if handle is not None and frame is not None and frame != page.main_frame:
            # an iframe's element: acted on through a handle of the frame's own world
            handle = (await frame.evaluate_handle(RESOLVE, ref)).as_element()
        if handle is None:
            raise ToolError(f"element {ref} is no longer on the page (it changed); take a "
                            "new browser_snapshot")
        return handle


COUNT_OPENED = """(() => {
  const open = window.open;
  window.open = function (...args) {
    window.__hermesOpened = (window.__hermesOpened || 0) + 1;
    return open.apply(this, args);
  };
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element && event.target.closest("a[href]");
    if (!link) return;
    if (link.hasAttribute("download"))
      window.__hermesDownloads = (window.__hermesDownloads || 0) + 1;
    else if (link.target && link.target !== "_self")
      window.__hermesOpened = (window.__hermesOpened || 0) + 1;
  }, true);
})();"""
"""Counts the windows a page opens (``window.open``, links to another target) and the
downloads its links start, so that an action waits for them instead of racing them."""
TAKE_COUNTS = """() => {
  const counts = [window.__hermesOpened || 0, window.__hermesDownloads || 0];
  window.__hermesOpened = 0;
  window.__hermesDownloads = 0;
  return counts;
}"""


PRIMED_NAMES = frozenset({
    "hermes.md", "agents.md", "claude.md", "conftest.py", "sitecustomize.py",
    "usercustomize.py", "makefile", "gnumakefile", "justfile", "setup.py", "noxfile.py"})
"""File names that tools pick up by themselves in a working directory: context files
(the next session's system prompt), code Python, pytest or make run unasked."""


def download_name(suggested: str) -> str:
    """The name a download is saved under: the page chooses it, so no directory, no
    hidden file (``.env``, ``.hermes.md``) and nothing picked up unasked (``AGENTS.md``,
    ``conftest.py``, ``*.pth``) but as ``download-NAME``."""
    name = Path(suggested).name.lstrip(".") or "download"
    if name.lower() in PRIMED_NAMES or name.lower().endswith(".pth"):
        return f"download-{name}"
    return name


def save_download(ctx: ToolContext | None, name: str, source: Any) -> str:
    """Write a finished download into the session's working directory under the file
    tools' write rules; the path shown to the model."""
    from hermes.tools.targets import file_target

    if ctx is None:
        raise ToolError("no session to save it for")
    files = ctx.files or ctx.environment.files()
    directory = str(ctx.cwd) if files.is_local else files.cwd
    stem, dot, suffix = download_name(name).partition(".")
    for n in range(100):  # never over an existing file: "report (1).txt"
        candidate = f"{stem}{f' ({n})' if n else ''}{dot}{suffix}"
        target = file_target(f"{directory}/{candidate}", ctx, write=True)
        if target.files.info(target.path) is None:
            break
    target.files.write(target.path, Path(source).read_bytes(), 0o644)
    return target.shown
