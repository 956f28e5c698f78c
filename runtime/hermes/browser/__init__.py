"""The ``browser`` toolset: a real Chromium driven through Playwright.

One browser per runtime (``BrowserService``), started at the first browser tool call;
one isolated context per session (``Tab``), closed when the session ends or idles out.
Playwright runs on one thread of its own with its own event loop (``BrowserLoop``): tool
handlers are called from any thread, the gateway's loop included, and wait for it.
Nothing here imports Playwright until a browser tool runs.
"""
