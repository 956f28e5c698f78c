"""``POST /webhooks/<route>``: the ASGI app a listener mounts for the webhook platform.

For each delivery, in order: the route must exist (404) and the method be POST (405); an
``Origin`` header, which senders never send and browsers always do, must be the
server's own (403); the body is read under the platform's limits (413 past
``max_body_bytes``, counted as it arrives; 408 when not whole within ``read_timeout``);
the signature must be good and fresh (401, see ``signature``); a signed GitHub
``ping`` (sent when a hook is created) is answered 200 ``pong`` without the agent; a
delivery whose signature or id was seen is answered 200 ``duplicate`` and not run again
(``replay``); the body must be JSON (400) and fill the route's template (422 naming the
missing field); a turn slot must be free (429). Then the agent runs the prompt in a
new session with only the route's toolsets: ``deliver: response`` answers 200 with
the answer; a chat target answers 202 at once and sends the answer there.

Every error is ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes.config.platform_schema import WebhookRoute
from hermes.config.webhook_template import TemplateError, render
from hermes.gateway.api_server.body import BodyLimits, Receive, Scope, Send, limit_bodies
from hermes.gateway.api_server.guard import foreign_origin
from hermes.gateway.api_server.wire import WireError
from hermes.gateway.webhook.replay import ReplayRecord
from hermes.gateway.webhook.signature import Unauthorized, is_ping, replay_keys, verify

PREFIX = "/webhooks/"
JSON = [(b"content-type", b"application/json")]


@dataclass
class Hook:
    """One route of one profile, ready to take deliveries."""

    name: str
    route: WebhookRoute
    template: list[str | tuple[str, ...]]
    seen: ReplayRecord
    window: float
    """``replay_window``: how far a signed timestamp may be from now."""
    run: Callable[[Hook, str, str], Any]
    """``run(hook, prompt, delivery_id)`` -> ``(status, body)``, awaitable; takes the turn
    slot before its first await (``Busy`` -> 429)."""
    accepting: bool = True


@dataclass
class WebhookApp:
    """The webhook routes of every profile on one listener."""

    ready: Callable[[], bool]
    log: logging.Logger
    limits: BodyLimits
    hooks: dict[str, Hook] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._limited = limit_bodies(self._delivery, self.limits, self.log)

    def add(self, hooks: dict[str, Hook], owner: str) -> None:
        """Serve ``hooks``; a route name another profile serves here is refused."""
        taken = sorted(set(hooks) & set(self.hooks))
        if taken:
            raise ValueError(f"webhook route(s) {', '.join(taken)} already served on this "
                             f"address by another profile; rename them in {owner}")
        self.hooks.update(hooks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hook = self.hooks.get(scope["path"][len(PREFIX):].rstrip("/"))
        error = self._refusal(scope, hook)
        if error is not None:
            return await respond(send, error.status, error.body())
        await self._limited(scope, receive, send)

    def _refusal(self, scope: Scope, hook: Hook | None) -> WireError | None:
        if hook is None:
            return WireError(404, f"no webhook route at {scope['path']}", code="not_found")
        if scope["method"] != "POST":
            return WireError(405, f"{scope['method']} {scope['path']}: use POST",
                             code="method_not_allowed")
        if not self.ready() or not hook.accepting:
            return WireError(503, "the gateway is starting or stopping; retry in a moment",
                             "server_unavailable")
        headers = dict(scope.get("headers", ()))
        return foreign_origin(headers.get(b"origin"), headers.get(b"host", b"").decode("latin-1"))

    async def _delivery(self, scope: Scope, receive: Receive, send: Send) -> None:
        hook = self.hooks[scope["path"][len(PREFIX):].rstrip("/")]
        body = (await receive()).get("body", b"")
        try:
            status, answer = await self._handle(hook, _headers(scope), body)
        except WireError as exc:
            self.log.info("webhook refused", extra={"fields": {
                "route": hook.name, "status": exc.status, "reason": exc.message}})
            status, answer = exc.status, exc.body()
        await respond(send, status, answer)

    async def _handle(self, hook: Hook, headers: dict[str, str], body: bytes
                      ) -> tuple[int, dict[str, Any]]:
        route = hook.route
        try:
            delivery_id = verify(route.signature, route.secret, headers, body, hook.window)
        except Unauthorized as exc:
            raise WireError(401, str(exc), "authentication_error", code="bad_signature") from None
        if is_ping(headers):
            return 200, {"status": "pong", "route": hook.name, "delivery_id": delivery_id}
        keys = replay_keys(route.signature, headers, delivery_id)
        if not hook.seen.first_time(keys, time.time()):
            return 200, {"status": "duplicate", "route": hook.name, "delivery_id": delivery_id}
        try:
            return await self._run(hook, body, delivery_id)
        except BaseException:  # not taken: the sender's retry of it must run
            hook.seen.forget(keys)
            raise

    async def _run(self, hook: Hook, body: bytes, delivery_id: str
                   ) -> tuple[int, dict[str, Any]]:
        try:
            prompt = render(hook.template, _json(body))
        except TemplateError as exc:
            raise WireError(422, str(exc), param="prompt", code="template_field") from None
        result: tuple[int, dict[str, Any]] = await hook.run(hook, prompt, delivery_id)
        return result


async def respond(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [*JSON, (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", ())}


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise WireError(400, f"the body is not JSON ({exc})", code="invalid_json") from None

