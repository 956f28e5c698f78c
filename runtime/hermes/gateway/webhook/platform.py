"""The ``webhook`` platform: signed deliveries to ``POST /webhooks/<route>`` run the agent.

Its routes are served on the gateway's HTTP listener of ``settings.host:port`` (the
API server's, when the address is the same), under ``/webhooks/``. Each delivery is
a new session, non-interactive (a command that needs approval is refused), with only
the route's ``toolsets``. Route secrets come from the home's ``.env`` by reference. The
deliveries each route took are recorded in the home (``webhooks/<platform>.<route>``,
``replay``) so that none runs twice, across restarts too.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from typing import Any

from hermes.agent.conversations import Busy, Draining
from hermes.agent.factory import Interaction
from hermes.agent.loop import TurnResult
from hermes.chats import TargetError, parse_target
from hermes.config.platform_schema import WebhookSettings
from hermes.config.schema import PlatformConfig
from hermes.config.webhook_template import parse_template
from hermes.errors import ConfigError, UserError
from hermes.gateway.api_server.body import BodyLimits
from hermes.gateway.api_server.platform import Listeners, cannot_listen
from hermes.gateway.api_server.wire import WireError
from hermes.gateway.base import MessageHandler, MessageSource, PlatformAdapter, PlatformState
from hermes.gateway.service import ProfileService
from hermes.gateway.webhook.app import PREFIX, Hook, WebhookApp
from hermes.gateway.webhook.replay import ReplayRecord


class WebhookPlatform(PlatformAdapter):
    """One profile's webhook routes."""

    def __init__(self, name: str, config: PlatformConfig, service: ProfileService,
                 listeners: Listeners):
        self.name = name
        self.service = service
        self.listeners = listeners
        self.status = PlatformState()
        settings = config.settings
        assert isinstance(settings, WebhookSettings)  # the schema types it by ``kind``
        self.settings = settings
        if not settings.routes:
            raise ConfigError("no routes: add one, e.g. `hermes config set platforms.enabled."
                              f"{name}.settings.routes.github.prompt '...'` (see the README)",
                              key=f"platforms.enabled.{name}.settings.routes")
        self.hooks = {route_name: Hook(route_name, route, parse_template(route.prompt),
                                       self._record(route_name), settings.replay_window,
                                       self._run)
                      for route_name, route in settings.routes.items()}
        self._background: set[asyncio.Task[None]] = set()

    def _record(self, route_name: str) -> ReplayRecord:
        """What the route took: signatures kept for ``replay_window`` seconds, or, on a
        ``github`` route (no signed time), for ``replay_retention``."""
        settings, retention = self.settings, self.settings.replay_retention
        github = settings.routes[route_name].signature == "github"
        path = self.service.home.path / "webhooks" / f"{self.name}.{route_name}"
        return ReplayRecord(path, retention.seconds if github else settings.replay_window,
                            retention.entries)

    async def start(self, on_message: MessageHandler) -> None:
        settings = self.settings
        limits = BodyLimits(settings.max_body_bytes, settings.read_timeout,
                            f"settings.max_body_bytes of the {self.name} platform")
        try:
            listener = await self.listeners.listener(settings, limits, self.service.log)
        except OSError as exc:
            raise cannot_listen(exc, settings.host, settings.port, self.service.name,
                                self.name) from exc
        app = listener.mounts.get(PREFIX)
        if not isinstance(app, WebhookApp):
            app = WebhookApp(listener.ready, self.service.log, limits)
            listener.mounts[PREFIX] = app
        app.limits.tighten(limits.max_bytes, limits.read_timeout)
        try:
            app.add(self.hooks, f"profile {self.service.name}'s platforms.enabled.{self.name}")
        except ValueError as exc:
            raise UserError(str(exc)) from exc
        self.status = PlatformState("running", f"http://{listener.address}{PREFIX} "
                                               f"({', '.join(self.hooks)})")

    async def stop(self) -> None:
        """Take no more deliveries; wait for the answers still to be delivered."""
        self.status.state = "stopping"
        for hook in self.hooks.values():
            hook.accepting = False
        await self.listeners.stop(self.settings.host, self.settings.port)
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        self.status.state = "stopped"

    async def send(self, source: MessageSource, text: str) -> None:
        """Answers go in the response or to the route's target: nothing is sent later."""

    async def _run(self, hook: Hook, prompt: str, delivery_id: str) -> tuple[int, dict[str, Any]]:
        """Take a turn slot now (429 if none), then answer in the response or in the
        background (202) to the route's target."""
        slot = ExitStack()
        try:
            slot.enter_context(self.service.slot())
        except Busy as exc:
            raise WireError(429, str(exc), "rate_limit_error", code="too_many_turns") from exc
        except Draining as exc:
            raise WireError(503, str(exc), "server_shutting_down") from exc
        how = Interaction(source="webhook", stream=False, toolsets=tuple(hook.route.toolsets))
        head = {"route": hook.name, "delivery_id": delivery_id}
        if hook.route.deliver == "response":
            with slot:
                result, session_id = await asyncio.to_thread(self._turn, how, prompt)
            _raise_for(result)
            return 200, {"status": "done", **head, "session_id": session_id,
                         "answer": result.text}
        task = asyncio.create_task(self._answer_later(slot, how, prompt, hook))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return 202, {"status": "accepted", **head, "deliver": hook.route.deliver}

    def _turn(self, how: Interaction, prompt: str) -> tuple[TurnResult, str]:
        """One turn in a new session (in a worker thread: open, run and close at once)."""
        conversation = self.service.open(how)
        return self.service.run_to_end(conversation, prompt), conversation.session_id

    async def _answer_later(self, slot: ExitStack, how: Interaction, prompt: str,
                            hook: Hook) -> None:
        with slot:
            result, _ = await asyncio.to_thread(self._turn, how, prompt)
        text = result.text if result.exit_reason not in ("error", "interrupted") else \
            f"(webhook {hook.name}: the turn ended with {result.exit_reason}: {result.error})"
        try:
            await self.service.deliveries.deliver(parse_target(hook.route.deliver), text)
        except TargetError as exc:
            self.service.log.error("webhook answer not delivered", extra={"fields": {
                "route": hook.name, "error": str(exc)}})


def _raise_for(result: TurnResult) -> None:
    if result.exit_reason == "error":
        raise WireError(502, f"the model call failed: {result.error}", "upstream_error")
    if result.exit_reason == "interrupted":
        raise WireError(503, "the turn was interrupted (the gateway is shutting down)",
                        "server_shutting_down")
