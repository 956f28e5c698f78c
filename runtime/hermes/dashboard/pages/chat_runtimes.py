"""The Chat page's runtimes: one per profile, opened on its first chat (through
``hermes.container.open_runtime``, as the gateway opens its profiles') and kept while
the dashboard lives, so every turn of a profile runs through that runtime's one
``Conversations`` (counted, interrupted, its approvals asked in the page).

A provider without its key does not stop the runtime from opening (``require_key=False``):
``Conversations.open`` refuses each turn with the pre-check's one line, which the page
shows before anything is sent (``ChatRuntime.refusal``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes.chats import MessageSource
from hermes.gateway.messaging.approvals import ChatApprovals, Reply
from hermes.gateway.service import ProfileService
from hermes.home import Home

SOURCE = "dashboard"
"""The sessions' source (``hermes sessions list --source dashboard``)."""
LOG = logging.getLogger("hermes.dashboard.chat")


@dataclass
class ChatRuntime:
    """One profile's runtime as the Chat page uses it."""

    service: ProfileService
    approvals: ChatApprovals
    """Dangerous commands of this profile's page turns, asked in the page."""
    owned: bool = True
    """Opened by the page (closed with the dashboard), not borrowed."""

    @property
    def refusal(self) -> str | None:
        """Why no turn can run (the provider's key is missing), one line; else None."""
        return self.service.conversations.refusal

    def close(self) -> None:
        if self.owned:
            self.service.runtime.close()


def source_of(session_id: str) -> MessageSource:
    """The "chat" a page's session is to the approvals: one per session."""
    return MessageSource(SOURCE, session_id)


class ChatRuntimes:
    """The runtimes of the profiles chatted with so far, by profile name."""

    def __init__(self, environ: Mapping[str, str], reply_for: Callable[[str], Reply],
                 borrowed: Mapping[str, Any] | None = None):
        self.environ = dict(environ)
        self.borrowed = dict(borrowed or {})
        """Runtimes already open, by profile (the gateway's, when it serves the dashboard):
        used as they are (their turns counted, limited and drained with the gateway's)
        and left to their owner to close."""
        self.reply_for = reply_for
        """Where a profile's approval questions (and their timeouts) go: the turn's
        event stream."""
        self._open: dict[str, ChatRuntime] = {}
        self._lock = threading.Lock()

    def get(self, home: Home) -> ChatRuntime:
        """``home``'s runtime, opened on the first call (blocking: call it from a worker
        thread); ``ConfigError`` when its config does not compose (one line). Returns an
        opened one as it is: a config edited meanwhile applies after a restart."""
        with self._lock:  # one opening per profile, even with two tabs at once
            runtime = self._open.get(home.name)
            if runtime is None:
                runtime = self._open[home.name] = self._start(home)
            return runtime

    def get_opened(self, profile: str) -> ChatRuntime | None:
        """``profile``'s runtime if it is open (never opens one). Without the lock: the
        event loop calls it, and the lock may be held for seconds while another profile's
        runtime opens (a dict read is atomic)."""
        return self._open.get(profile)

    def _start(self, home: Home) -> ChatRuntime:
        runtime = self.borrowed.get(home.name)
        if runtime is None:
            runtime = self._open_runtime(home)
            service = ProfileService(home, runtime, LOG)
        else:  # the owner's turn limit stays as it set it
            limit = runtime.container.conversations().max_turns
            service = ProfileService(home, runtime, LOG)
            service.max_concurrency = limit
        timeout = runtime.settings.approvals.chat_timeout
        return ChatRuntime(service, ChatApprovals(self.reply_for(home.name), timeout, LOG),
                           owned=home.name not in self.borrowed)

    def _open_runtime(self, home: Home) -> Any:
        from hermes.config import compose_config
        from hermes.container import open_runtime

        environ = self.environ | {"HERMES_HOME": str(home.path)}
        composed = compose_config(home, environ)
        return open_runtime(home, composed.config, environ, raw=composed.raw,
                            require_key=False)

    def close(self) -> None:
        """Close every runtime opened (the dashboard stops)."""
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for runtime in opened:
            try:
                runtime.close()
            except Exception as exc:  # noqa: BLE001 - the others still close
                LOG.error("closing a chat runtime failed: %s", exc)

