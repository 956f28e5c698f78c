"""An image at an http(s) URL, fetched under the web's address rules (``web.*``: private
addresses refused unless ``web.allow_private`` names them, every redirect hop checked,
``web.timeout``), its body capped at ``vision.max_bytes``. httpx is imported at the first
fetch, never when this module is."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hermes.agent.attachments import Attachment, Fetch, ImageRefused, VisionLimits, from_url
from hermes.errors import HermesError


def image_fetcher(web: Any, network: Any = None) -> Fetch:
    """``fetch(url, max_bytes) -> bytes`` under ``web``'s address rules; a refused address
    or a failed request raises ``ImageRefused`` (one line naming the redacted URL)."""

    def fetch(url: str, max_bytes: int) -> bytes:
        from hermes.web.fetch import Fetcher, FetchLimits

        limits = replace(FetchLimits.from_config(web), max_bytes=max_bytes)
        fetcher = Fetcher(Fetcher.from_config(web).policy, limits, network)
        try:
            return fetcher.fetch(url, kinds=("image", "other")).body  # the bytes decide
        except HermesError as exc:
            raise ImageRefused(f"image URL refused: {exc}") from exc

    return fetch


def image_at(url: str, limits: VisionLimits, web: Any, network: Any = None) -> Attachment:
    """The checked image at ``url`` (``data:`` URLs decoded, http(s) fetched)."""
    return from_url(url, limits, image_fetcher(web, network))
