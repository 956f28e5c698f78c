"""``hermes gateway run``: one process serving the platforms of one or more profiles.

Each profile gets its own composed config, runtime (sessions, memories, approvals,
tool environment), platforms and log; they share nothing but code. A platform
that fails to start is reported (log, status) and the others keep serving; one whose
server cannot be reached yet is shown ``reconnecting`` and keeps trying with backoff.

Shutdown: the first SIGTERM/SIGINT stops accepting; turns already running may
finish for ``gateway.shutdown_grace`` seconds, then they are interrupted (their
transcripts stay valid) and answered. A second signal stops at once. Background
learning reviews and scheduled jobs' runs get the same grace. Every ``TICK_EVERY``
seconds (and at start) each profile's due jobs are started (``hermes.gateway.cron_ticker``).
Every ``CURATE_EVERY`` seconds (and at start) each profile's skills curator is ticked;
it runs only when due.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from hermes.errors import ConfigError, UserError
from hermes.gateway.api_server.platform import Listeners
from hermes.gateway.base import PlatformAdapter, PlatformState
from hermes.gateway.cron_ticker import TICK_EVERY, CronTicker
from hermes.gateway.messaging.gate import gate_for
from hermes.gateway.pidfile import GatewayLock, write_status
from hermes.gateway.platforms import build_adapters
from hermes.gateway.router import SessionRouter
from hermes.gateway.service import ProfileService
from hermes.hints import for_profile
from hermes.home import Home
from hermes.logs import close_logger, gateway_logger

STATUS_EVERY = 2.0
CURATE_EVERY = 600.0
REVIEW_STOP_WAIT = 5.0


def _warm_model_layer(models: list[Any]) -> None:
    """litellm, imported once the gateway serves (~3 s: not on the way to ``/health``)
    when some profile's model calls go through it; a request that comes first waits for
    what is left of the import."""
    from hermes.models.warm import preload_litellm

    preload_litellm(models)


def _finish_reviews(runtime: Any, seconds: float) -> None:
    """Let running learning reviews finish within what is left of the grace period, then
    stop them (what they saved stays)."""
    learning = runtime.container.learning()
    if not learning.wait(seconds):
        learning.stop_all()
        learning.wait(REVIEW_STOP_WAIT)


def _require_key(home: Home, composed: Any) -> None:
    """Refuse a profile whose provider needs a key it lacks: one line naming it."""
    from hermes.agent.prechecks import MissingKey, key_problem

    problem = key_problem(composed.config, composed.raw, home.name, home.env_file)
    if problem is not None:
        raise MissingKey(f"profile {home.name}: "
                         f"{for_profile(problem, home.name, always=True)}")


class Beside(Protocol):
    """A server started once the platforms are and stopped with them: the dashboard
    (``hermes.dashboard.beside_gateway``), which the CLI hands in."""

    status: PlatformState

    async def start(self) -> None:
        """Serve; on failure ``status`` says why (nothing raised)."""

    async def stop(self) -> None: ...

    def force(self) -> None:
        """A second signal: close its connections now."""

    def announcement(self) -> list[str]:
        """The lines said once at start."""


Besides = Callable[[Sequence[tuple[Home, Any]], Mapping[str, str]], Beside | None]
"""Given the served profiles' homes and open runtimes and the environment, the server
to start beside them, if their config asks for one."""


class _Profile:
    def __init__(self, home: Home, service: ProfileService, runtime_stack: Any):
        self.home = home
        self.service = service
        self.stack = runtime_stack
        self.adapters: list[PlatformAdapter] = []
        self.failed: dict[str, PlatformState] = {}
        self.router = SessionRouter(service)
        self.cron = CronTicker(service.runtime.container.cron(), service,
                               self.router.adapters, service.runtime.settings.cron.enabled)


class Gateway:
    def __init__(self, homes: Sequence[Home], environ: Mapping[str, str],
                 overrides: Sequence[str] = (), beside: Besides | None = None):
        self.homes = list(homes)
        self.environ = dict(environ)
        self.overrides = list(overrides)
        self.profiles: list[_Profile] = []
        self.listeners = Listeners()
        self.beside = beside
        self.dashboard: Beside | None = None
        """The dashboard beside the platforms (``dashboard.enabled``), once started."""
        self.started = time.time()
        self.grace = 30.0
        self._stop = asyncio.Event()
        self._signals = 0
        self._locks: list[GatewayLock] = []

    def lock(self) -> None:
        """Take every home's gateway lock (``GatewayRunning`` names the holder's pid)."""
        try:
            for home in self.homes:
                lock = GatewayLock(home)
                lock.acquire()
                self._locks.append(lock)
        except BaseException:
            self.unlock()
            raise

    def unlock(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks.clear()

    async def run(self, announce: Callable[[Gateway], None] = lambda gateway: None) -> None:
        """Serve until stopped; ``lock()`` first (it is taken here if it was not).
        ``announce`` is called once every platform that could start listens."""
        if not self._locks:
            self.lock()
        try:
            await self._serve(announce)
        finally:
            self.unlock()

    def platform_states(self) -> list[tuple[str, str, PlatformState]]:
        """``(profile, platform, state)`` of every platform, started or failed."""
        return [(p.home.name, name, state) for p in self.profiles
                for name, state in [*((a.name, a.status) for a in p.adapters),
                                    *p.failed.items()]]

    async def _serve(self, announce: Callable[[Gateway], None]) -> None:
        for home in self.homes:
            self.profiles.append(await asyncio.to_thread(self._build, home))
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal)
        try:
            for profile in self.profiles:
                await self._start_platforms(profile)
            if not any(p.adapters for p in self.profiles):
                raise UserError("no platform could start: " + "; ".join(
                    f"{p.home.name}/{n}: {s.detail}" for p in self.profiles
                    for n, s in p.failed.items()))
            await self._start_dashboard()
            self.listeners.ready = True
            announce(self)
            models = [p.service.runtime.container.model() for p in self.profiles]
            warming = asyncio.create_task(asyncio.to_thread(_warm_model_layer, models))
            await self._until_stopped()
            await warming
        finally:
            await self._shutdown()  # a second signal during it stops at once
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    async def _start_dashboard(self) -> None:
        if self.beside is None:
            return
        self.dashboard = self.beside([(p.home, p.service.runtime) for p in self.profiles],
                                     self.environ)
        if self.dashboard is not None:
            await self.dashboard.start()

    def _build(self, home: Home) -> _Profile:
        from hermes.config import compose_config
        from hermes.config.api_keys import create_missing_keys
        from hermes.container import open_runtime

        environ = self.environ | {"HERMES_HOME": str(home.path)}
        try:
            composed = compose_config(home, environ, self.overrides, hydra_in_child=True)
        except ConfigError as exc:  # its hints act on this profile, not the one run with
            raise ConfigError(for_profile(str(exc), home.name, always=True)) from exc
        if not composed.config.platforms.enabled:
            raise ConfigError(f"profile {home.name} enables no platform — enable the API "
                              f"server with `hermes -p {home.name} config set platforms "
                              "api_server`", key="platforms")
        _require_key(home, composed)  # before anything of the profile is made or started
        home.ensure()
        created = create_missing_keys(home, environ, composed.config, composed.raw)
        if created:  # an API server without its key: it has one now
            composed = compose_config(home, environ, self.overrides, hydra_in_child=True)
        self.grace = composed.config.gateway.shutdown_grace
        stack = contextlib.ExitStack()
        runtime = open_runtime(home, composed.config, environ, raw=composed.raw)
        stack.callback(runtime.close)
        log = gateway_logger(home, environ, composed.config.secrets.environment_files)
        stack.callback(close_logger, log)
        for note in created:
            sys.stderr.write(f"hermes gateway: {home.name}: {note}\n")
            log.info("API server key created", extra={"fields": {"file": str(home.env_file)}})
        service = ProfileService(home, runtime, log)
        return _Profile(home, service, stack)

    async def _start_platforms(self, profile: _Profile) -> None:
        settings = profile.service.runtime.settings.platforms
        for name, adapter in build_adapters(settings, profile.service, self.listeners,
                                            profile.failed):
            gate = gate_for(name, settings.enabled[name], profile.home, adapter.send,
                            profile.service.log)  # allowlist and pairing before the router
            try:
                await adapter.start(gate.guard(profile.router.handle))
            except Exception as exc:  # noqa: BLE001 - one platform's failure is reported
                profile.failed[name] = PlatformState("failed", str(exc))
                profile.service.log.error("platform failed", extra={"fields": {
                    "platform": name, "error": str(exc)}})
                continue
            profile.router.adapters[name] = adapter
            profile.adapters.append(adapter)
            connected = adapter.status.state == "running"  # else it retries meanwhile
            profile.service.log.info("platform started" if connected else
                                     "platform started, not connected yet", extra={"fields": {
                                         "platform": name, "detail": adapter.status.detail}})
        profile.service.runtime.container.outbound().sender = \
            profile.service.deliveries.blocking(asyncio.get_running_loop())  # send_message
        await asyncio.to_thread(profile.service.events.emit, "on_gateway_start",
                                profile=profile.home.name,
                                platforms=[a.name for a in profile.adapters])

    async def _until_stopped(self) -> None:
        next_curation = next_tick = 0.0
        while not self._stop.is_set():
            self._write_status("running")
            if time.monotonic() >= next_tick:  # at start too: runs missed while down
                next_tick = time.monotonic() + TICK_EVERY
                for profile in self.profiles:
                    await profile.cron.tick()
            if time.monotonic() >= next_curation:
                next_curation = time.monotonic() + CURATE_EVERY
                await self._curate()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), STATUS_EVERY)

    async def _curate(self) -> None:
        """Tick every profile's curator (``hermes.learning.curator``)."""
        for profile in self.profiles:
            log = profile.service.log
            try:
                done = await asyncio.to_thread(profile.service.runtime.container.curator().tick)
            except Exception as exc:  # noqa: BLE001 - upkeep never stops the gateway
                log.error("curator failed", extra={"fields": {"error": str(exc)}})
                continue
            if done is not None and done.changed:
                log.info("curator", extra={"fields": {"stale": list(done.stale),
                                                      "archived": list(done.archived)}})

    def _on_signal(self) -> None:
        self._signals += 1
        self._stop.set()
        if self._signals > 1:  # a second signal: stop now
            for profile in self.profiles:
                profile.service.interrupt_all()
                profile.service.runtime.container.learning().stop_all()
            self.listeners.force_all()
            if self.dashboard is not None:
                self.dashboard.force()

    async def _shutdown(self) -> None:
        for profile in self.profiles:
            profile.service.drain()
        self._write_status("stopping")
        deadline = time.monotonic() + self.grace
        timer = asyncio.get_running_loop().call_later(self.grace, self._interrupt_turns)
        try:
            await asyncio.gather(*(adapter.stop() for p in self.profiles
                                   for adapter in p.adapters), *self._dashboard_stop(),
                                 return_exceptions=True)
            await asyncio.gather(*(p.router.drain() for p in self.profiles),
                                 *(p.cron.drain() for p in self.profiles))
        finally:
            timer.cancel()
        await asyncio.gather(*(adapter.close() for p in self.profiles
                               for adapter in p.adapters), return_exceptions=True)
        for profile in self.profiles:
            await asyncio.to_thread(_finish_reviews, profile.service.runtime,
                                    max(deadline - time.monotonic(), 0.0))
            await asyncio.to_thread(profile.service.events.emit, "on_gateway_stop",
                                    profile=profile.home.name)
            await asyncio.to_thread(profile.stack.close)

    def _dashboard_stop(self) -> list[Any]:
        return [] if self.dashboard is None else [self.dashboard.stop()]

    def _interrupt_turns(self) -> None:
        for profile in self.profiles:
            count = profile.service.interrupt_all()  # each running turn once
            if count:
                profile.service.log.info("grace period over: turns interrupted",
                                         extra={"fields": {"turns": count}})

    def _write_status(self, state: str) -> None:
        names = [p.home.name for p in self.profiles]
        for profile in self.profiles:
            platforms = {a.name: vars(a.status) for a in profile.adapters}
            platforms |= {n: vars(s) for n, s in profile.failed.items()}
            write_status(profile.home, {
                "pid": os.getpid(), "state": state, "started_at": self.started,
                "updated_at": time.time(), "profile": profile.home.name,
                "profiles_in_process": names, "platforms": platforms,
                "active_turns": profile.service.active_turns,  # each running turn once
                "sessions": profile.router.session_count,
                **({} if self.dashboard is None else {"dashboard": vars(self.dashboard.status)})})
