"""The platform adapter interface: how the gateway meets Telegram, Slack, an HTTP API, ...

An adapter knows nothing of the agent. It turns what arrives on its platform into
``MessageEvent``s handed to the gateway's callback, and sends replies back with
``send``. ``start``, ``stop`` and ``close`` run in the gateway's event loop: ``stop``
ends the intake, ``close`` comes once the turns still running have answered. Chat
platforms build on ``hermes.gateway.messaging`` (allowlists, pairing, approvals in the
chat, an outbox that survives reconnects).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hermes.chats import MessageSource

if TYPE_CHECKING:
    from hermes.gateway.images import IncomingImage
    from hermes.gateway.voice import IncomingAudio

PlatformStateName = Literal["starting", "running", "reconnecting", "failed", "stopping",
                            "stopped"]


@dataclass(frozen=True)
class MessageEvent:
    """One message from a person, normalised."""

    source: MessageSource
    text: str
    message_id: str = ""
    images: tuple[IncomingImage, ...] = ()
    """Images it carries, downloaded only for an allowed sender (``hermes.gateway.images``)."""
    audio: tuple[IncomingAudio, ...] = ()
    """Voice notes or audio files, transcribed before the turn (``hermes.gateway.voice``)."""


@dataclass
class PlatformState:
    """What ``hermes gateway status`` shows for one platform."""

    state: PlatformStateName = "starting"
    detail: str = ""
    """The address it serves, or why it failed (or is not connected)."""
    retry_at: float | None = None
    """While ``reconnecting``: when the next attempt is made (epoch seconds)."""
    extra: dict[str, str] = field(default_factory=dict)


MessageHandler = Callable[[MessageEvent], Awaitable[None]]


class PlatformAdapter(ABC):
    """One connection to a messaging platform (or an API) for one profile."""

    name: str
    """The platform's name in config."""
    status: PlatformState

    @abstractmethod
    async def start(self, on_message: MessageHandler) -> None:
        """Connect and begin delivering messages; return once serving."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop accepting messages; return once nothing more will arrive."""

    @abstractmethod
    async def send(self, source: MessageSource, text: str) -> None:
        """Deliver ``text`` to the chat (and thread) of ``source``."""

    async def typing(self, source: MessageSource) -> None:
        """Show the chat that an answer is being written (repeated during a turn); no-op
        where the platform has no such thing."""

    async def close(self) -> None:
        """After ``stop``, once running turns have answered: deliver what is queued and
        let go of the connection."""
