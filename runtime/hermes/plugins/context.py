"""``PluginContext``: what a plugin's ``register(ctx)`` registers through.

One context per plugin per runtime. Everything registered lands in that plugin's
``PluginRecord`` and reaches the runtime only if ``register`` returns, so two
runtimes in one process (two profiles in a gateway) never share a registration.
Misuse (a tool name that is taken, a bad schema) raises ``ValueError``: the plugin is
then skipped like any plugin whose ``register`` fails. A slash or CLI command whose name
a built-in command has is refused with a warning instead, and so is a hook event this
Hermes does not have (hermes-agent warns too); the rest of the plugin loads. What
hermes-agent's plugins may register that Hermes has no place for yet (middleware, image
and video providers, a cron scheduler, ...) is accepted and recorded as
"not supported yet" (``UNSUPPORTED``), with a warning, so the rest of the plugin works.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.events import Callback
from hermes.plugins.output import guarded
from hermes.plugins.registrations import CliCommand, PluginRecord, SlashCommand
from hermes.tools.base import ToolSpec, always_available

if TYPE_CHECKING:
    from hermes.home import Home
    from hermes.plugins.discovery import Found

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
UNSUPPORTED = ("register_middleware",
               "register_image_gen_provider",
               "register_video_gen_provider", "register_cron_scheduler",
               "register_context_engine", "register_dashboard_auth_provider",
               "register_secret_source", "register_tts_provider",
               "register_transcription_provider", "register_slack_action_handler",
               "register_auxiliary_task")
"""hermes-agent's ``ctx.register_*`` methods Hermes accepts without using (yet)."""
COMMAND_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


class PluginContext:
    """Handed to ``register(ctx)``; see the module docstring."""

    def __init__(self, found: Found, record: PluginRecord, host: Any):
        self.found = found
        self.manifest = found.manifest
        self._record = record
        self._host = host
        self.logger: logging.Logger = host.logger.getChild(found.key)
        """The plugin's logger: what it logs at INFO and above goes to the home's
        ``logs/plugins.log`` (secrets redacted)."""

    @property
    def home(self) -> Home:
        """The profile's home: keep the plugin's own files under ``home.path``."""
        return self._host.home  # type: ignore[no-any-return]

    @property
    def profile_name(self) -> str:
        return self.home.name

    def getenv(self, name: str, default: str | None = None) -> str | None:
        """A variable as the runtime sees it: the environment or the profile's ``.env``
        (the runtime never copies ``.env`` into ``os.environ``)."""
        value = self._host.getenv(name)
        return value if value else default

    # -- tools ----------------------------------------------------------------------

    def register_tool(self, name: str, toolset: str, schema: Mapping[str, Any],
                      handler: Callable[..., Any], check_fn: Callable[[], bool] | None = None,
                      requires_env: list[str] | None = None, is_async: bool = False,
                      description: str = "", emoji: str = "", override: bool = False,
                      parallel_safe: bool = False) -> None:
        """A tool, declared like the built-ins: ``schema`` is ``{"name", "description",
        "parameters"}``; ``handler(args, **kwargs)`` returns a JSON string; ``check_fn``
        hides it while it returns False. A built-in's name is never replaced."""
        if not TOOL_NAME.fullmatch(name):
            raise ValueError(f"tool name {name!r}: use 1-64 letters, digits, '_' or '-'")
        if override or name in self._host.taken_tool_names() or \
                name in {t.name for t in self._record.tools}:
            raise ValueError(f"tool {name!r} is already registered (built-in or another "
                             "plugin's); plugins cannot replace tools — pick another name")
        self._host.check_toolset(toolset)
        parameters = _parameters(name, schema)
        self._record.tools.append(ToolSpec(
            name=name, toolset=toolset, description=str(
                description or schema.get("description") or f"{name} ({self.manifest.name})"),
            parameters=parameters, handler=guarded(_tool_handler(handler, is_async)),
            check=check_fn or always_available, requires_env=tuple(requires_env or ()),
            parallel_safe=parallel_safe))
        self._record.toolsets.setdefault(toolset, self.manifest.description)

    def dispatch_tool(self, name: str, args: Mapping[str, Any] | None = None,
                      **_: Any) -> str:
        """Call any tool as the model would: hooks, argument checks, approval, redaction
        and the result's cap apply. In a chat's slash command it runs in that session
        (its approvals ask there); elsewhere in a session of its own, where nobody can
        approve a dangerous command. Returns the result's JSON string."""
        return self._host.dispatch_tool(name, dict(args or {}))

    # -- hooks and commands ---------------------------------------------------------

    def register_hook(self, event: str, callback: Callable[..., Any],
                      timeout: float | None = None) -> None:
        """Subscribe ``callback(**kwargs)`` to ``event`` (``hermes.events.EVENTS``)."""
        from hermes.errors import did_you_mean
        from hermes.events import EVENTS

        if event not in EVENTS:
            self._record.ignored_hooks.append(event)
            self._host.warn_plugin(self.found.key, f"hook {event!r} is no event of this "
                                   f"Hermes{did_you_mean(event, EVENTS)}; it is not called")
            return
        self._record.hooks.append(Callback(event, guarded(callback), self.found.key, timeout))

    def register_command(self, name: str, handler: Callable[[str], Any],
                         description: str = "", args_hint: str = "") -> None:
        """``/name [args]`` in chat and in the gateway; ``handler(raw_args)`` returns the
        reply (sync or async). A built-in command's name is refused with a warning."""
        clean = name.strip().lstrip("/").lower().replace(" ", "-")
        if not COMMAND_NAME.fullmatch(clean):
            raise ValueError(f"slash command {name!r}: use 1-32 of a-z, 0-9, '_' or '-'")
        if self._host.refuse_command(clean, self.found.key):
            return
        self._record.commands[clean] = SlashCommand(
            clean, handler, description or f"{self.manifest.name} command", self.found.key,
            args_hint)

    def register_cli_command(self, name: str, help: str = "",
                             setup_fn: Callable[[Any], None] | None = None,
                             handler_fn: Callable[[Any], Any] | None = None,
                             description: str = "") -> None:
        """``hermes <name> ...``: ``setup_fn(parser)`` builds its argparse tree,
        ``handler_fn(args)`` runs it. Listed in ``hermes --help`` while enabled."""
        if not COMMAND_NAME.fullmatch(name):
            raise ValueError(f"CLI command {name!r}: use 1-32 of a-z, 0-9, '_' or '-'")
        if setup_fn is None and handler_fn is None:
            raise ValueError(f"CLI command {name!r} needs setup_fn or handler_fn")
        if self._host.refuse_cli_command(name, self.found.key):
            return
        self._record.cli_commands[name] = CliCommand(name, help or description, setup_fn,
                                                     handler_fn, self.found.key, description)

    def register_skill(self, name: str, path: str | Path) -> None:
        """A read-only skill the agent loads as ``<plugin>:<name>`` (``skill_view``); not
        listed in the system prompt's index. ``path`` is its ``SKILL.md`` or directory."""
        directory = Path(path)
        directory = directory.parent if directory.name == "SKILL.md" else directory
        if not (directory / "SKILL.md").is_file():
            raise ValueError(f"skill {name!r}: no SKILL.md at {directory}")
        if not COMMAND_NAME.fullmatch(name):
            raise ValueError(f"skill name {name!r}: use 1-32 of a-z, 0-9, '_' or '-'")
        self._record.skills[f"{self.manifest.name}:{name}"] = directory

    # -- what Hermes has no place for yet ----------------------------------------------

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name not in UNSUPPORTED:
            raise AttributeError(f"PluginContext has no {name!r}")

        def accept(*args: Any, **kwargs: Any) -> None:
            what = name.removeprefix("register_").replace("_", " ")
            if what not in self._record.unsupported:
                self._record.unsupported.append(what)
                self._host.warn_plugin(self.found.key, f"{name}() is not supported yet; "
                                       "the rest of the plugin works")

        return accept

    # -- providers ------------------------------------------------------------------

    def register_model_provider(self, name: str, factory: Callable[[Any], Any]) -> None:
        """``provider.provider: <name>`` then talks through ``factory(provider_settings)``,
        a ``hermes.models.base.ModelClient``."""
        self._record.model_providers[_provider_name(name)] = factory

    def register_platform(self, name: str, adapter_factory: Callable[..., Any], **_: Any
                          ) -> None:
        """A gateway platform: ``platforms.enabled.<x>.kind: <name>`` builds its adapter
        with ``adapter_factory(name, platform_settings, service, listeners)``."""
        self._record.platforms[_provider_name(name)] = adapter_factory

    def register_memory_provider(self, provider: Any, name: str | None = None) -> None:
        """An external memory provider (``hermes.memory.base.ExternalProvider``, or a
        ``factory(home, memory_settings)`` making one) that ``memory.providers`` names."""
        key = name or getattr(provider, "name", None)
        if not isinstance(key, str):
            raise ValueError("register_memory_provider needs a name (or a provider with one)")
        factory = provider if inspect.isfunction(provider) or inspect.isclass(provider) \
            else (lambda _home, _settings, instance=provider: instance)
        self._record.memory_providers[_provider_name(key)] = factory

    def register_web_search_provider(self, provider: Any) -> None:
        """A web search backend (hermes-agent's ``WebSearchProvider``: ``name``,
        ``is_available()``, ``search(query, limit)`` answering ``{"success": true, "data":
        {"web": [{"title", "url", "description"}]}}``, optionally ``supports_extract()`` and
        ``extract(urls)``) that ``web.backend: plugin:<name>`` selects."""
        name = getattr(provider, "name", None)
        if not isinstance(name, str) or not callable(getattr(provider, "search", None)):
            raise ValueError("register_web_search_provider needs a provider with a name "
                             "and search(query, limit)")
        self._record.web_search_providers[_provider_name(name)] = provider

    def register_browser_provider(self, provider: Any) -> None:
        """A browser service (hermes-agent's ``BrowserProvider``: ``name``,
        ``is_available()``, ``create_session(session_id)`` returning ``{"cdp_url": ...,
        "bb_session_id": ...}`` (or the URL, or a Playwright ``Browser``) and
        ``close_session(id)``) that ``browser.backend: <name>`` selects."""
        name = getattr(provider, "name", None)
        if not isinstance(name, str):
            raise ValueError("register_browser_provider needs a provider with a name")
        if not callable(getattr(provider, "create_session", None)):  # hermes-agent ignores it
            self._host.warn_plugin(self.found.key, f"browser provider {name!r} has no "
                                   "create_session(session_id); it is not used")
            return
        self._record.browser_providers[_provider_name(name)] = provider

    def register_environment(self, name: str, factory: Callable[..., Any]) -> None:
        """An execution environment: ``environment.kind: <name>`` runs tools' commands in
        ``factory(home, environment_settings, environ)`` (a
        ``hermes.environments.base.Environment``)."""
        self._record.environments[_provider_name(name)] = factory


def _parameters(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    parameters = schema.get("parameters", schema if schema.get("type") == "object" else None)
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ValueError(f"tool {name!r}: schema['parameters'] must be a JSON object schema "
                         '({"type": "object", "properties": {...}})')
    return parameters


def _tool_handler(handler: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    """The registry's ``handler(args, ctx=...)`` calling the plugin's
    ``handler(args, **kwargs)`` (``task_id`` is the session, as hermes-agent passes it);
    a coroutine it returns (``is_async``) is run to completion."""

    def run(args: dict[str, Any], ctx: Any = None, **_: Any) -> Any:
        task = getattr(ctx, "session_id", "")
        result = handler(args, ctx=ctx, task_id=task)
        return asyncio.run(result) if inspect.iscoroutine(result) else result

    return run


def _provider_name(name: str) -> str:
    if not COMMAND_NAME.fullmatch(name):
        raise ValueError(f"provider name {name!r}: use 1-32 of a-z, 0-9, '_' or '-'")
    return name
