"""discord.py's ``Client``, pointed at ``settings.api_base`` and handing events to the adapter.

discord.py builds every REST URL from a class constant (``discord.http.Route.BASE``) and
opens the gateway at another (``DiscordWebSocket.DEFAULT_GATEWAY``). Setting those would
move every client of the process, so this client keeps them and gets its own HTTP client
instead (``RebasedHTTPClient``): each request's URL has Discord's base replaced by
``api_base``, and the gateway's by the one ``GET /gateway/bot`` names at that base, as
Discord's documentation asks bots to do. With the default ``api_base`` nothing is
rewritten. Interaction responses go through the same client (``respond``), not through
discord.py's webhook adapter, which has a base URL of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import HTTPClient, Route

MAX_RATELIMIT_WAIT = 30.0
"""Seconds of a 429's ``retry_after`` discord.py waits out itself (its minimum); a longer
one raises ``RateLimited``, which the outbox waits out."""
Handler = Callable[[Any], Awaitable[None]]


class RebasedHTTPClient(HTTPClient):
    """discord.py's HTTP client with Discord's REST and gateway addresses replaced."""

    def __init__(self, api_base: str, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.api_base = api_base.rstrip("/")
        self.gateway_url: str | None = None
        """The gateway ``GET /gateway/bot`` named at ``api_base`` (fetched at login)."""

    async def request(self, route: Route, **kwargs: Any) -> Any:
        if route.url.startswith(Route.BASE):
            route.url = self.api_base + route.url[len(Route.BASE):]
        return await super().request(route, **kwargs)

    async def ws_connect(self, url: str, *, compress: int = 0) -> aiohttp.ClientWebSocketResponse:
        default = str(DiscordWebSocket.DEFAULT_GATEWAY)
        if self.gateway_url and url.startswith(default):
            url = str(yarl.URL(self.gateway_url).with_query(yarl.URL(url).query))
        return await super().ws_connect(url, compress=compress)


class HermesClient(discord.Client):
    """One bot connection: messages and interactions go to the adapter's handlers."""

    def __init__(self, api_base: str, on_message: Handler, on_interaction: Handler):
        self._api_base = api_base
        self._message_handler = on_message
        self._interaction_handler = on_interaction
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = True
        intents.message_content = True  # privileged: enabled in the Developer Portal
        super().__init__(intents=intents, max_ratelimit_timeout=MAX_RATELIMIT_WAIT,
                         enable_debug_events=False)

    def _get_state(self, **options: Any) -> Any:
        # Client.__init__ made its HTTP client just before; replace it before the state
        # (and through it everything else) takes it.
        if self._api_base.rstrip("/") != Route.BASE:
            self.http = RebasedHTTPClient(self._api_base, self.loop, None,
                                          max_ratelimit_timeout=MAX_RATELIMIT_WAIT)
        return super()._get_state(**options)

    async def login(self, token: str) -> None:
        await super().login(token)
        if isinstance(self.http, RebasedHTTPClient):
            _, url, _ = await self.http.get_bot_gateway()
            self.http.gateway_url = url

    async def on_message(self, message: discord.Message) -> None:
        await self._message_handler(message)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await self._interaction_handler(interaction)

    async def respond(self, interaction: discord.Interaction, payload: dict[str, Any]) -> None:
        """Answer an interaction (``POST /interactions/{id}/{token}/callback``)."""
        await self.http.request(Route("POST", "/interactions/{interaction_id}/{token}/callback",
                                      interaction_id=interaction.id, token=interaction.token),
                                json=payload)

    async def edit_original(self, token: str, content: str) -> None:
        """Put ``content`` in a deferred interaction's response."""
        assert self.application_id is not None, "set at login"
        await self.http.request(Route(
            "PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
            webhook_id=self.application_id, webhook_token=token),
            json={"content": content, "allowed_mentions": {"parse": []}})
