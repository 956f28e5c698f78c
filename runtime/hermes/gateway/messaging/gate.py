"""Who may talk to the agent on a messaging platform.

A sender passes when their user id is in the platform's ``allowed_users``
(``platforms.enabled.<name>.allowed_users``; empty means nobody) or was paired with
``hermes pairing approve``. Anyone else gets no agent access: in a direct message
they are offered a pairing code (when the platform's ``pairing`` setting is on),
in a group they are ignored. Every refusal is logged without the message text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable

from hermes.config.schema import PlatformConfig
from hermes.gateway.base import MessageEvent, MessageHandler, MessageSource
from hermes.gateway.messaging.pairing import CODE_TTL, PairingError, PairingStore
from hermes.hints import command
from hermes.home import Home

Reply = Callable[[MessageSource, str], Awaitable[None]]
NOT_ALLOWED = "Sorry, you are not allowed to talk to this agent."


class Gate:
    """The allowlist and pairing of one platform; ``guard`` puts it in front of a handler."""

    def __init__(self, platform: str, allowed_users: Iterable[str], store: PairingStore,
                 reply: Reply, log: logging.Logger, *, pairing: bool = True,
                 profile: str | None = None):
        self.platform = platform
        self.allowed_users = frozenset(str(user) for user in allowed_users)
        self.store = store
        self.reply = reply
        self.log = log
        self.pairing = pairing
        self.profile = profile

    def allows(self, user_id: str) -> bool:
        """Whether ``user_id`` is on the allowlist or paired (an unreadable pairing file
        lets nobody in by pairing)."""
        if user_id in self.allowed_users:
            return True
        try:
            return self.store.is_paired(self.platform, user_id)
        except PairingError as exc:
            self.log.error("pairing file unreadable", extra={"fields": {"error": str(exc)}})
            return False

    def guard(self, handler: MessageHandler) -> MessageHandler:
        """``handler`` for allowed senders; everyone else is refused here."""

        async def guarded(event: MessageEvent) -> None:
            if self.allows(event.source.user_id):
                await handler(event)
            else:
                await self.refuse(event.source)

        return guarded

    async def refuse(self, source: MessageSource) -> None:
        """Log the refusal; in a direct message, offer a code or say no."""
        fields = {"platform": self.platform, "user": source.user_id, "chat": source.chat_id,
                  "chat_type": source.chat_type}
        if source.chat_type != "direct" or not source.user_id:
            self.log.info("message refused: sender not allowed", extra={"fields": fields})
            return
        if not self.pairing:
            self.log.info("message refused: sender not allowed", extra={"fields": fields})
            await self.reply(source, NOT_ALLOWED)
            return
        await self._offer_code(source, fields)

    async def _offer_code(self, source: MessageSource, fields: dict[str, str]) -> None:
        try:
            issued = await asyncio.to_thread(self.store.request, self.platform,
                                             source.user_id, source.user_name)
        except PairingError as exc:
            self.log.error("pairing failed", extra={"fields": fields | {"error": str(exc)}})
            return
        if issued.code is None:  # already has a code, or pairing is locked: stay quiet
            self.log.info("pairing code refused", extra={"fields": fields | {
                "reason": issued.refusal}})
            return
        self.log.info("pairing code issued", extra={"fields": fields})  # never the code
        approve = command(self.profile, f"pairing approve {self.platform} {issued.code}")
        await self.reply(source, f"Hi! I don't know you yet. To talk to me, ask my owner to "
                                 f"run:\n\n{approve}\n\nThe code is valid for "
                                 f"{CODE_TTL / 3600:g} hour.")


def gate_for(name: str, config: PlatformConfig, home: Home, reply: Reply,
             log: logging.Logger) -> Gate:
    """The gate of platform ``name`` of ``home``'s profile, from its config."""
    return Gate(name, config.allowed_users, PairingStore(home.pairing_dir), reply, log,
                pairing=bool(getattr(config.settings, "pairing", False)), profile=home.name)
