"""``PluginHost``: the plugins of one runtime (the container's ``plugins``).

It discovers the home's plugins, loads the enabled ones the first time something
asks for what they registered (a chat, the gateway; never ``hermes profile list``),
and runs their slash commands and ``dispatch_tool`` calls. A plugin is loaded only
if ``plugins.enabled`` names it, ``plugins.disabled`` does not (that always wins)
and its ``requires_env`` variables are set; of one name, a plugin never replaces an
enabled one from another source without ``plugins.allow_shadow`` (``discovery.py``: it is
skipped with a warning and never imported). A plugin whose import or ``register``
raises is skipped: its traceback goes to ``logs/plugins.log``, one warning line to
standard error, and the runtime keeps working. What plugin code prints goes to standard
error (``output.py``). ``HERMES_PLUGINS_DEBUG=1`` prints discovery and loading in
detail.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes.events import HookBus
from hermes.home import Home
from hermes.plugins.discovery import (
    BUNDLED_DIR,
    Discovery,
    Found,
    Sources,
    discover,
    shadow_refusal,
)
from hermes.plugins.index import write_index
from hermes.plugins.registrations import PluginRecord, PluginState, Registrations
from hermes.plugins.settings import PluginSettings

DEBUG_ENV = "HERMES_PLUGINS_DEBUG"
log = logging.getLogger(__name__)
Say = Callable[[str], None]


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class PluginHost:
    """See the module docstring. ``conversations`` gives the runtime's conversations, for
    ``dispatch_tool`` calls made outside a session (in one session of the plugins' own,
    ended with the runtime: ``close``)."""

    def __init__(self, home: Home, settings: PluginSettings, *, environ: Mapping[str, str],
                 getenv: Callable[[str], str | None] | None = None, cwd: Path | None = None,
                 bundled: Path | None = BUNDLED_DIR, entry_points: bool = True,
                 warn: Say = lambda line: _stderr(f"warning: {line}"),
                 logger: logging.Logger | None = None):
        self.home = home
        self.settings = settings
        self.environ = environ
        self._getenv = getenv or environ.get
        self.cwd = cwd
        self.bundled = bundled
        self.entry_points = entry_points
        self.warn = warn
        self.debug: Say | None = (lambda line: _stderr(f"plugins: {line}")) \
            if environ.get(DEBUG_ENV, "").lower() in ("1", "true", "yes", "on") else None
        self._logger = logger
        self.conversations: Callable[[], Any] | None = None
        """Gives the runtime's ``Conversations`` (set by the container)."""
        self._discovery: Discovery | None = None
        self._registrations: Registrations | None = None
        self._loading: Registrations | None = None
        self._lock = threading.RLock()
        self._agent: contextvars.ContextVar[Any] = contextvars.ContextVar(
            f"plugin-agent-{id(self)}", default=None)
        self._scratch: Any = None

    # -- discovery and loading ------------------------------------------------------

    @property
    def logger(self) -> logging.Logger:
        """``logs/plugins.log`` of the home (opened on first use)."""
        if self._logger is None:
            from hermes.logs import home_logger

            self._logger = home_logger(self.home, self.environ, "plugins")
        return self._logger

    def sources(self) -> Sources:
        project = self.cwd / ".hermes" / "plugins" if self.settings.project and self.cwd \
            else None
        return Sources(self.home.plugins_dir, self.settings.directories, project,
                       self.entry_points, self.bundled)

    def discovery(self) -> Discovery:
        with self._lock:
            if self._discovery is None:
                self._discovery = discover(self.sources(), self.debug,
                                           self.settings.may_shadow)
                if self.debug and not self.settings.project:
                    self.debug("project plugins: off (plugins.project: false)")
            return self._discovery

    def discover(self) -> list[str]:
        """The keys of every plugin found, enabled or not."""
        return sorted(found.key for found in self.discovery().found)

    def registrations(self) -> Registrations:
        """What the enabled plugins registered; they are loaded on the first call."""
        with self._lock:
            if self._registrations is None:
                self._registrations = self._load()
            return self._registrations

    def getenv(self, name: str) -> str | None:
        return self._getenv(name)

    def _load(self) -> Registrations:
        if not self.settings.enabled:  # opt-in: nothing to find, nothing to import
            self._say("no plugin is enabled (plugins.enabled is empty)")
            return Registrations(events=HookBus(self.settings.hook_timeout, log))
        discovery = self.discovery()
        self._loading = registrations = Registrations(
            events=HookBus(self.settings.hook_timeout, self.logger))
        for problem in discovery.problems:
            self._warning(f"plugin skipped: {problem}")
        for plugin, kept in discovery.refused:
            self._warning(shadow_refusal(plugin, kept))
        for found in discovery.found:
            state = self._skip_reason(found) or self._load_one(found, registrations)
            registrations.states.append(state)
        self._unknown_enabled(discovery)
        self._loading = None
        write_index(self.home, registrations)
        return registrations

    def load_single(self, key: str) -> Registrations:
        """Only plugin ``key``, if it would load: what running its CLI command needs."""
        found = self.discovery().get(key)
        self._loading = registrations = Registrations(
            events=HookBus(self.settings.hook_timeout, self.logger))
        if found is not None:
            registrations.states.append(self._skip_reason(found)
                                        or self._load_one(found, registrations))
        self._loading = None
        return registrations

    def _skip_reason(self, found: Found) -> PluginState | None:
        settings = self.settings
        if settings.is_disabled(*found.names):
            return self._skipped(found, "disabled", "disabled in config (plugins.disabled)")
        if not settings.is_enabled(*found.names):
            return self._skipped(found, "not enabled", "not enabled in config (run `hermes "
                                 f"plugins enable {found.key}`)")
        missing = found.manifest.missing_env(self.getenv)
        if missing:
            self._warning(f"plugin {found.key} is not loaded: missing {', '.join(missing)} "
                          f"(set with `hermes config set NAME VALUE`)")
            return self._skipped(found, "missing env", f"missing {', '.join(missing)}")
        return None

    def _skipped(self, found: Found, status: Any, why: str) -> PluginState:
        self._say(f"skipped {found.key} ({found.source}): {why}")
        return PluginState(found.key, status, why)

    def _load_one(self, found: Found, registrations: Registrations) -> PluginState:
        from hermes.plugins.context import PluginContext
        from hermes.plugins.loader import import_plugin, register_function
        from hermes.plugins.output import plugin_code

        self._say(f"loading {found.key} (source={found.source}, {found.where})")
        for note in found.manifest.notes:
            self.warn_plugin(found.key, note)
        record = PluginRecord(found.key, found.manifest.name)
        try:
            with plugin_code():  # what it prints goes to standard error
                register = register_function(import_plugin(found, self.home.path))
                register(PluginContext(found, record, self))
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: a plugin never ends us
            problem = f"{type(exc).__name__}: {exc}"
            self.logger.error(f"plugin {found.key} failed to load", exc_info=exc,
                              extra={"fields": {"plugin": found.key, "path": found.where}})
            self._warning(f"plugin {found.key} failed to load and is disabled: {problem} "
                          f"(traceback in {self.home.logs_dir / 'plugins.log'})")
            return PluginState(found.key, "failed", problem)
        registrations.merge(record)
        self._say(f"{found.key}: registered {record.summary()}")
        return PluginState(found.key, "loaded", record.summary(), record)

    def _unknown_enabled(self, discovery: Discovery) -> None:
        known = {name for found in discovery.found for name in found.names}
        for name in self.settings.enabled:
            if name not in known and name not in self.settings.disabled:
                self._warning(f"plugins.enabled names {name!r}, which is not installed "
                              "(`hermes plugins list` shows what is)")

    def warn_plugin(self, key: str, line: str) -> None:
        """A warning about plugin ``key`` that does not keep it from loading."""
        self._warning(f"plugin {key}: {line}")

    def _warning(self, line: str) -> None:
        self.logger.warning(line)
        self.warn(line)

    def _say(self, line: str) -> None:
        if self.debug:
            self.debug(line)

    # -- checks while plugins register ----------------------------------------------

    def taken_tool_names(self) -> set[str]:
        from hermes.config.tool_catalog import tool_names

        loading = self._loading or self._registrations or Registrations()
        return {*tool_names(), *loading.tool_names()}

    def check_toolset(self, name: str) -> None:
        from hermes.config.tool_catalog import toolset_names

        if name in toolset_names() or not name:
            raise ValueError(f"toolset {name!r} is built in: plugin tools go in a toolset of "
                             "their own (e.g. the plugin's name)")

    def refuse_command(self, name: str, plugin: str) -> bool:
        """True (with a warning) when ``/name`` is a built-in or another plugin's."""
        from hermes.agent.commands import refusal

        loading = self._loading or Registrations()
        why = refusal(name) or (f"/{name} is plugin {loading.commands[name].plugin}'s"
                                if name in loading.commands else None)
        if why:
            self._warning(f"plugin {plugin}: {why}; its /{name} is ignored")
        return why is not None

    def refuse_cli_command(self, name: str, plugin: str) -> bool:
        from hermes.cli_names import taken_names

        loading = self._loading or Registrations()
        if name in taken_names() or name in loading.cli_commands:
            self._warning(f"plugin {plugin}: `hermes {name}` is taken; its command is ignored")
            return True
        return False

    # -- commands and tool calls ----------------------------------------------------

    @contextlib.contextmanager
    def bound(self, agent: Any) -> Iterator[None]:
        """``dispatch_tool`` calls made within run in ``agent``'s session."""
        token = self._agent.set(agent)
        try:
            yield
        finally:
            self._agent.reset(token)

    def run_command(self, name: str, argument: str, agent: Any = None) -> str:
        """Run plugin command ``/name``; its reply (a failure is one line, logged)."""
        import asyncio
        import inspect

        from hermes.plugins.output import plugin_code

        command = self.registrations().commands[name]
        with self.bound(agent), plugin_code():
            try:
                reply = command.handler(argument)
                if inspect.iscoroutine(reply):
                    reply = asyncio.run(reply)
            except Exception as exc:  # a plugin's bug is reported, never a crash
                self.logger.error(f"/{name} failed", exc_info=exc)
                return f"/{name} failed: {type(exc).__name__}: {exc}"
        return "" if reply is None else str(reply)

    def dispatch_tool(self, name: str, args: dict[str, Any]) -> str:
        """A tool call through the agent pipeline (see ``PluginContext.dispatch_tool``)."""
        agent = self._agent.get() or self._scratch_agent()
        return str(agent.dispatch(name, args).content)

    def _scratch_agent(self) -> Any:
        """A session of the plugins' own (non-interactive: nobody approves in it)."""
        with self._lock:
            if self._scratch is None:
                if self.conversations is None:
                    raise RuntimeError("dispatch_tool needs a runtime: call it from a tool, "
                                       "a hook or a command, not while registering")
                from hermes.agent.factory import Interaction

                self._scratch = self.conversations().open(
                    Interaction(source="plugin", stream=False))
            return self._scratch.agent

    def close(self) -> None:
        """End the plugins' own session, if one was opened (the model never answers in
        it: it is discarded, as any unanswered session)."""
        with self._lock:
            scratch, self._scratch = self._scratch, None
        if scratch is not None:
            scratch.end()


def plugin_host(home: Home, settings: Any, environ: Mapping[str, str], secrets: Any = None,
                conversations: Callable[[], Any] | None = None) -> PluginHost:
    """The host of a runtime, from its composed config's ``plugins`` section;
    ``conversations`` gives its ``Conversations``."""
    host = PluginHost(home, PluginSettings.from_config(home, settings), environ=environ,
                      getenv=secrets.get if secrets is not None else None, cwd=Path.cwd())
    host.conversations = conversations
    return host
