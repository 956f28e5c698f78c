"""aiohttp's connection errors as the messaging core's ``Disconnected``, for the adapters
that speak HTTP with aiohttp themselves (mattermost, signal). aiohttp is imported only
when the block runs, i.e. when a platform talks to its server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from hermes.gateway.messaging.outbox import Disconnected


@contextlib.contextmanager
def disconnected_on_errors(action: str) -> Iterator[None]:
    """Raise ``Disconnected`` (naming ``action``) for a connection that failed, timed out,
    was cut mid-answer, or a WebSocket handshake the server refused."""
    import aiohttp

    try:
        yield
    except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError,
            OSError) as exc:
        raise Disconnected(f"{action}: {type(exc).__name__}: {exc}") from None
    except aiohttp.WSServerHandshakeError as exc:
        raise Disconnected(f"{action}: HTTP {exc.status}") from None
