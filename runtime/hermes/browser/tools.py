"""The ``browser`` toolset: ten tools over the session's tab (``BrowserService``).

Every result carries the page's URL and, inside one ``fence_web`` fence, whatever came
from the page (title, snapshot, dialog texts, console lines): the model reads it as
data, never as instructions. What happened meanwhile (a dialog accepted, a window
opened, a download saved, a request refused) is reported in the next result.
"""

from __future__ import annotations

import base64
import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from hermes.browser.backends import first_line
from hermes.browser.guard import check_frames, check_navigation
from hermes.browser.service import BrowserService
from hermes.browser.snapshot import Snapshot, split_pages
from hermes.browser.snapshot_js import SNAPSHOT
from hermes.browser.tab import Tab
from hermes.errors import ToolError
from hermes.tools.base import ToolOutput, ToolSpec, object_schema
from hermes.tools.context import ToolContext
from hermes.tools.results import ok

TOOLSET = "browser"
REF = {"type": "string", "description": "An element's ref from the last browser_snapshot "
                                        "(e.g. e12)."}
Action = Callable[[Tab], Awaitable[Any]]
Act = Callable[[BrowserService, dict[str, Any], ToolContext, Tab], Awaitable[Any]]
"""One tool's work on the browser thread: ``act(service, args, ctx, tab)``."""


async def report(service: BrowserService, tab: Tab, page_text: str = "",
                 **ours: Any) -> str:
    """The result: our fields, then the page's words and the events since the last
    result inside one fence."""
    from hermes.web.redaction import redact_url
    from hermes.web.untrusted import FENCE, fence_web

    # a page may answer for its option values, scroll position...: defused like its text
    ours = {key: _defused(value, FENCE) for key, value in ours.items()}
    await tab.settle()
    await check_frames(tab)
    page = tab.page
    url = redact_url(page.url) if page is not None else "about:blank"
    events = [*tab.take_notes(), *(f"refused: {r}" for r in service.take_refusals(tab))]
    parts = []
    if page is not None and not page.is_closed():
        with contextlib.suppress(Exception):  # navigating meanwhile
            parts.append(f"title: {await page.title()}")
    parts += [f"event: {event}" for event in events]
    if page_text:
        parts.append(page_text)
    return ok(url=url, **ours, content=fence_web("\n".join(parts), url))


def _defused(value: Any, tag: str) -> Any:
    """``value`` (a field beside the fence, perhaps the page's words) unable to open or
    close the fence."""
    from hermes.tools.fence import defuse

    if isinstance(value, str):
        return defuse(value, tag)
    if isinstance(value, list | tuple):
        return [_defused(item, tag) for item in value]
    return value


async def refuse_guarded(service: BrowserService, tab: Tab, url: str, response: Any) -> None:
    """A navigation that ended in the guard's refusal (a redirect to a refused address)
    is an error naming the reason, not a page."""
    if response is None or response.status != 403:
        return
    refused = service.take_refusals(tab)
    if refused:
        from hermes.web.redaction import redact_url

        raise ToolError(f"{redact_url(url)}: {refused[-1]}")


def playwright_errors(action: Action, timeout: float) -> Action:
    """Playwright's exceptions as one line for the model."""

    @functools.wraps(action)
    async def run(tab: Tab) -> Any:
        from playwright.async_api import Error
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        try:
            return await action(tab)
        except PlaywrightTimeout as exc:
            await tab.close_stuck()
            raise ToolError(f"timed out after {timeout:g} s (browser.navigation_timeout): "
                            f"{first_line(exc)}; the window was closed (the next "
                            "browser_navigate opens a new one)") from None
        except Error as exc:
            # a page's script may have thrown it (a scroll, a snapshot): its words
            from hermes.web.untrusted import FENCE

            raise ToolError(_defused(first_line(exc), FENCE)) from None

    return run


async def navigate(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                   tab: Tab) -> str:
    target = await check_navigation(service.policy(), args["url"], ctx)
    for attempt in (1, 2):
        page = await tab.current()
        try:
            response = await page.goto(target, wait_until="domcontentloaded")
            break
        except Exception as exc:
            refused = service.take_refusals(tab)
            if refused:
                from hermes.web.redaction import redact_url

                raise ToolError(f"{redact_url(args['url'])}: {refused[-1]}") from None
            # The window closed under the navigation (a stuck window closed just before
            # may take the renderer they shared down with it): once more, in a new one.
            if attempt == 2 or not page.is_closed():
                raise exc
    tab.snapshot = None
    await refuse_guarded(service, tab, args["url"], response)
    return await report(service, tab, status=response.status if response else None)


async def snapshot(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                   tab: Tab) -> str:
    page = await tab.current()
    number = args.get("page", 1)
    if number == 1 or tab.snapshot is None or tab.snapshot.url != page.url:
        text = await page.evaluate(SNAPSHOT)  # in the page's world: it may tamper
        if not isinstance(text, str):
            raise ToolError("the page broke the snapshot (its scripts changed what the "
                            "snapshot relies on); try browser_screenshot")
        tab.snapshot = Snapshot.of(page.url, text)
    pages = split_pages(tab.snapshot.text, service.settings.snapshot_max_chars)
    if number > len(pages):
        raise ToolError(f"the snapshot has {len(pages)} page(s); ask for page 1 to "
                        f"{len(pages)}")
    more = {"next": f"browser_snapshot(page={number + 1})"} if number < len(pages) else {}
    return await report(service, tab, pages[number - 1],
                        page=f"page {number} of {len(pages)}", **more)


async def click(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                tab: Tab) -> str:
    element = await tab.locate(args["ref"])
    before = tab.page.url
    await element.click()
    return await settled(service, tab, before, clicked=args["ref"])


async def type_text(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                    tab: Tab) -> str:
    element = await tab.locate(args["ref"])
    before = tab.page.url
    await element.fill(args["text"])
    if args.get("submit"):
        await element.press("Enter")
    return await settled(service, tab, before, typed_into=args["ref"],
                         submitted=bool(args.get("submit")))


async def press(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                tab: Tab) -> str:
    page = await tab.current()
    before = page.url
    await page.keyboard.press(args["key"])
    return await settled(service, tab, before, pressed=args["key"])


async def select(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                 tab: Tab) -> str:
    element = await tab.locate(args["ref"])
    chosen = await element.select_option(list(args["values"]))
    return await report(service, tab, selected=chosen)


async def scroll(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                 tab: Tab) -> str:
    page = await tab.current()
    where = await page.evaluate(SCROLL, args["direction"])
    return await report(service, tab, scrolled=args["direction"], position=where)


async def back(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
               tab: Tab) -> str:
    page = await tab.current()
    if await page.go_back(wait_until="domcontentloaded") is None and \
            page.url in ("about:blank", ""):
        raise ToolError("no earlier page in this window's history")
    tab.snapshot = None
    return await report(service, tab)


async def screenshot(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                     tab: Tab) -> ToolOutput:
    page = await tab.current()
    png = await page.screenshot(type="png")
    text = await report(service, tab, screenshot="attached as an image (PNG); "
                        "vision_analyze can look at it again")
    service.keep_screenshot(ctx.session_id, png)  # after report checked the page's files
    return ToolOutput(text, (("image/png", base64.b64encode(png).decode()),))


async def console(service: BrowserService, args: dict[str, Any], ctx: ToolContext,
                  tab: Tab) -> str:
    await tab.current()
    lines = list(tab.console)
    tab.console.clear()
    return await report(service, tab, "\n".join(lines) or "(no console messages)",
                        messages=len(lines))


async def settled(service: BrowserService, tab: Tab, before: str,
                  **ours: Any) -> str:
    """After an action: the load that it started, if any, waited for."""
    await tab.adopt_opened()
    page = await tab.current()
    if page.url != before:
        await page.wait_for_load_state("domcontentloaded")
        tab.snapshot = None
    return await report(service, tab, **ours)


def browser_tools(service: BrowserService) -> list[ToolSpec]:
    """The ten browser tools over ``service``; hidden while ``service.unavailable()``."""
    timeout = service.settings.navigation_timeout

    def tool(name: str, description: str, schema: dict[str, Any],
             act: Act) -> ToolSpec:
        def handle(args: dict[str, Any], *, ctx: ToolContext, **_: Any) -> Any:
            async def action(tab: Tab) -> Any:
                return await act(service, args, ctx, tab)

            return service.run(ctx, playwright_errors(action, timeout))

        return ToolSpec(name, TOOLSET, description, schema, handle,
                        check=lambda: service.unavailable() is None)

    return [
        tool("browser_navigate", "Open a URL in the browser (http(s), or a file the sandbox "
             "may read as file:///path). Then use browser_snapshot to see the page.",
             object_schema(("url",), url={"type": "string"}), navigate),
        tool("browser_snapshot", "The current page as an accessibility tree; interactive "
             "elements carry [ref=eN] for browser_click, browser_type and browser_select. "
             "Long pages come in pages: page=2, ...",
             object_schema(page={"type": "integer", "minimum": 1, "default": 1}), snapshot),
        tool("browser_click", "Click the element ref of the last snapshot.",
             object_schema(("ref",), ref=REF), click),
        tool("browser_type", "Replace the text of the input ref with text; submit=true "
             "presses Enter afterwards.",
             object_schema(("ref", "text"), ref=REF, text={"type": "string"},
                           submit={"type": "boolean", "default": False}), type_text),
        tool("browser_press", "Press a key on the page (Enter, Escape, ArrowDown, Tab, "
             "Control+A, ...).", object_schema(("key",), key={"type": "string"}), press),
        tool("browser_select", "Choose options (by value or label) of the select ref.",
             object_schema(("ref", "values"), ref=REF,
                           values={"type": "array", "items": {"type": "string"},
                                   "minItems": 1}), select),
        tool("browser_scroll", "Scroll the page.",
             object_schema(("direction",), direction={
                 "type": "string", "enum": ["up", "down", "top", "bottom"]}), scroll),
        tool("browser_back", "Go back to the previous page.", object_schema(), back),
        tool("browser_screenshot", "A screenshot of the visible part of the page, shown to "
             "you as an image.", object_schema(), screenshot),
        tool("browser_console", "The page's console messages and errors since the last "
             "call.", object_schema(), console),
    ]


SCROLL = """(direction) => {
  const step = Math.round(window.innerHeight * 0.8);
  if (direction === "up") window.scrollBy(0, -step);
  else if (direction === "down") window.scrollBy(0, step);
  else if (direction === "top") window.scrollTo(0, 0);
  else window.scrollTo(0, document.documentElement.scrollHeight);
  return `${Math.round(window.scrollY)} of ${document.documentElement.scrollHeight} px`;
}"""
