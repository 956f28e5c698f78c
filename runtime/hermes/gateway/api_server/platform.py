"""The ``api_server`` platform: an OpenAI-compatible HTTP API (FastAPI on uvicorn).

Profiles of one gateway whose API servers name the same host and port share one
listener; the request's ``model`` picks the profile. Other platforms mount their
paths on the same listeners (``Listener.mounts``: the webhook platform's
``/webhooks/``). Every profile must have a real key (``API_SERVER_KEY`` in its ``.env``,
16 characters or more, no placeholder; ``hermes.config.api_keys`` creates one when it is
unset), on loopback too: sandboxed commands and web pages reach loopback. The API's
requests pass ``guard`` (Host, Origin, JSON bodies); every connection to a listener
meets ``connections`` (header and body deadlines, a cap per client address).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

from hermes.config.platform_schema import ApiServerSettings, ListenerSettings
from hermes.config.schema import PlatformConfig
from hermes.errors import ConfigError, UserError
from hermes.gateway.api_server.app import JSON_BODIES, Served, create_app
from hermes.gateway.api_server.body import App, BodyLimits, Receive, Scope, Send, refuse
from hermes.gateway.api_server.connections import ConnectionLimits, limited_protocol
from hermes.gateway.api_server.guard import HostRule, guard_requests, is_loopback
from hermes.gateway.api_server.responses import ResponseStore
from hermes.gateway.api_server.wire import WireError
from hermes.gateway.base import MessageHandler, MessageSource, PlatformAdapter, PlatformState
from hermes.gateway.service import ProfileService

MIN_KEY_CHARS = 16
PLACEHOLDERS = ("changeme", "change-me", "placeholder", "your-key", "your_key", "yourkey",
                "secret", "password", "example", "xxxx", "api_server_key", "replace")


class ApiServerPlatform(PlatformAdapter):
    """One profile's API server settings; serving is done by the shared ``Listener``."""

    def __init__(self, name: str, config: PlatformConfig, service: ProfileService,
                 listeners: Listeners):
        self.name = name
        self.service = service
        self.listeners = listeners
        self.status = PlatformState()
        settings = config.settings
        assert isinstance(settings, ApiServerSettings)  # the schema types it by ``kind``
        self.settings = settings
        service.max_concurrency = settings.max_concurrency
        self.key = _checked_key(name, settings.host, config.token)

    async def start(self, on_message: MessageHandler) -> None:
        served = Served(self.service, self.key,
                        ResponseStore(self.service.home.path / "api_responses"))
        try:
            address = await self.listeners.add(self.settings, self.service.name, served)
        except OSError as exc:
            raise cannot_listen(exc, self.settings.host, self.settings.port,
                                self.service.name, self.name) from exc
        self.status = PlatformState("running", f"http://{address}/v1")

    async def stop(self) -> None:
        self.status.state = "stopping"
        await self.listeners.stop(self.settings.host, self.settings.port)
        self.status.state = "stopped"

    async def send(self, source: MessageSource, text: str) -> None:
        """HTTP answers in the response itself: nothing is sent later."""


class Listeners:
    """The gateway's HTTP listeners, one per address, each serving its profiles."""

    def __init__(self) -> None:
        self._listeners: dict[tuple[str, int], Listener] = {}
        self.ready = False
        """False until every profile's platforms have started: /health answers 503 and
        requests are refused with 503 meanwhile."""

    async def add(self, settings: ApiServerSettings, profile: str, served: Served) -> str:
        """Serve ``profile`` on the listener of its address (started on first use); profiles
        sharing a listener share the strictest of their body limits."""
        limits = BodyLimits(settings.max_body_bytes, settings.read_timeout)
        listener = await self.listener(settings, limits, served.service.log)
        listener.host_rule.allow(settings.allowed_hosts)
        if listener.served:
            listener.limits.tighten(settings.max_body_bytes, settings.read_timeout)
        else:  # the first API profile here (another platform may have started it)
            listener.limits.max_bytes, listener.limits.read_timeout = \
                settings.max_body_bytes, settings.read_timeout
        listener.served[profile] = served
        return listener.address

    async def listener(self, settings: ListenerSettings, limits: BodyLimits,
                       log: logging.Logger) -> Listener:
        """The listener of ``settings.host:port``, started on first use (``limits`` apply to
        its API paths until an API profile brings its own); its connection limits become
        the strictest of everyone's on it."""
        address = (settings.host, settings.port)
        listener = self._listeners.get(address)
        if listener is None:
            listener = Listener(*address, lambda: self.ready, limits, log,
                                ConnectionLimits.of(settings))
            await listener.start()
            self._listeners[address] = listener
        listener.connections.tighten(ConnectionLimits.of(settings))
        return listener

    async def stop(self, host: str, port: int) -> None:
        listener = self._listeners.get((host, port))
        if listener is not None:
            await listener.stop()

    def force_all(self) -> None:
        """A second signal: close connections now, whatever is still running."""
        for listener in self._listeners.values():
            listener.force()


class Listener:
    """One HTTP server (uvicorn) on one address: the API of the profiles in ``served``,
    and the apps in ``mounts`` by path prefix."""

    def __init__(self, host: str, port: int, ready: Callable[[], bool], limits: BodyLimits,
                 log: logging.Logger, connections: ConnectionLimits):
        self.host, self.port = host, port
        self.ready = ready
        self.limits = limits
        self.log = log
        self.connections = connections
        self.host_rule = HostRule.for_address(host)
        """The ``Host`` names its API answers to (``allowed_hosts`` of its profiles added)."""
        self.served: dict[str, Served] = {}
        self.mounts: dict[str, App] = {}
        """ASGI apps by path prefix (``/webhooks/``), asked before the API."""
        self.address = f"{host}:{port}"
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        import uvicorn

        sock = _bind(self.host, self.port)
        self.address = _format_address(sock.getsockname())
        api = guard_requests(create_app(self.served, self.ready, self.limits, self.log),
                             self.host_rule, JSON_BODIES)
        app = _with_mounts(api, self.mounts, self.served)
        config = uvicorn.Config(app, log_config=None, http=limited_protocol(self.connections),
                                log_level="warning", access_log=False, lifespan="off",
                                server_header=False, timeout_keep_alive=30)
        self._server = quiet_server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        for _ in range(200):  # started within 10 s, or its failure is reported
            if self._server.started or self._task.done():
                break
            await asyncio.sleep(0.05)
        if not self._server.started:
            raise RuntimeError(f"the API server on {self.address} did not start")

    async def stop(self) -> None:
        """Stop accepting; answer what was accepted (turns may still be finishing)."""
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, SystemExit):
            await self._task

    def force(self) -> None:
        if self._server is not None:
            self._server.force_exit = True


def cannot_listen(exc: OSError, host: str, port: int, profile: str, platform: str
                  ) -> UserError:
    """The error for an address that cannot be bound, with the setting to change."""
    return UserError(f"cannot listen on {host}:{port}: {exc.strerror} — stop what uses it, or "
                     f"pick another port: `hermes -p {profile} config set "
                     f"platforms.enabled.{platform}.settings.port PORT`")


def _with_mounts(app: App, mounts: dict[str, App], served: dict[str, Served]) -> App:
    """The mounts by prefix, else the API; a listener serving no API profile (webhooks
    only) answers a bare 404 that names nothing it does not serve."""

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        for prefix, mounted in mounts.items():
            if path.startswith(prefix):
                return await mounted(scope, receive, send)
        if not served and scope.get("type") == "http":
            return await refuse(WireError(404, "not found", code="not_found"), send)
        return await app(scope, receive, send)

    return dispatch


def quiet_server(config: Any) -> Any:
    """A uvicorn server without its own signal handlers: the gateway owns SIGTERM/SIGINT."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Server(config)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off only for sockets that say
    # they are TCP; left on, every response waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(256)
    sock.setblocking(False)
    return sock


def _format_address(name: Any) -> str:
    host, port = name[0], name[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _checked_key(name: str, host: str, key: str | None) -> str:
    """``key`` if it is a real key; the API server always needs one (sandboxed commands
    and, through DNS rebinding, web pages reach loopback too)."""
    where = f"platforms.enabled.{name}"
    beyond = "" if is_loopback(host) else " beyond loopback"
    fix = "set one with `hermes config set API_SERVER_KEY \"$(openssl rand -hex 24)\"`"
    if not key:
        raise ConfigError(f"bound to {host}{beyond} without a key — {fix}", key=f"{where}.token")
    if len(key) < MIN_KEY_CHARS or any(p in key.lower() for p in PLACEHOLDERS):
        raise ConfigError(f"the API key is too short or a placeholder (bound to {host}) — "
                          f"use {MIN_KEY_CHARS}+ random characters: {fix}",
                          key=f"{where}.token")
    return key
