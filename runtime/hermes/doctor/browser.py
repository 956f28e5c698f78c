"""Whether the ``browser`` toolset has a browser to drive, and how to add one."""

from __future__ import annotations

from typing import Any

from hermes.doctor.base import Check

HOW_TO_ADD = ("install Chromium (Debian: apt-get install chromium; Docker image: "
              "containers/build.sh --browser; NixOS: services.hermes-agent.browser.enable "
              "= true) or set browser.executable")


def check_browser(browser: Any) -> Check:
    """One row: the Chromium ``local`` would start, or what ``cdp``/a provider uses."""
    from hermes.browser.backends import find_chromium

    if browser.backend == "cdp":
        return Check("browser", "ok", f"cdp: the browser at {browser.cdp_url} (not checked)")
    if browser.backend != "local":
        return Check("browser", "ok", f"provider {browser.backend} (a plugin's)")
    found = find_chromium(browser.executable)
    if found:
        return Check("browser", "ok", f"Chromium: {found}")
    wanted = f"browser.executable {browser.executable}" if browser.executable else \
        "no chromium, chromium-browser or google-chrome on PATH"
    return Check("browser", "warn", f"{wanted}: the browser tools are hidden", HOW_TO_ADD)
