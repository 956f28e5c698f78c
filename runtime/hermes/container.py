"""The runtime container: every service of one runtime, wired from (Home, config).

One ``RuntimeContainer`` per home; nothing here is module-global, so two
profiles' runtimes live side by side in one process (the gateway does this).
Selectors pick implementations by the same keys as the YAML option names.
Services never import dependency_injector; only this module and the edges do.
Tests replace any provider with ``runtime.container.<name>.override(fake)``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from operator import attrgetter
from typing import Any

from hermes.importing import hidden_during_import

# dependency_injector loads FastAPI and Starlette (for ``@inject`` with their ``Depends``)
# and pydantic-settings (``Configuration.from_pydantic``) when they are installed; nothing
# here is wired or configured from pydantic: ~0.3 s and ~15 MiB in every process that
# opens a runtime, a one-shot included.
with hidden_during_import(("fastapi", "starlette", "fast_depends", "werkzeug",
                           "pydantic_settings")):
    from dependency_injector import containers, providers

from hermes.agent.compress import summariser_client
from hermes.agent.conversations import Conversations
from hermes.agent.factory import AgentDeps, AgentFactory
from hermes.agent.prechecks import MissingKey, key_problem
from hermes.browser.service import BrowserService, open_browser
from hermes.browser.tools import browser_tools
from hermes.config.delegation_schema import DelegationConfig
from hermes.config.schema import HermesConfig
from hermes.credentials import Secrets
from hermes.cron.manage import Jobs
from hermes.cron.service import CronService
from hermes.cron.store import job_store
from hermes.cron.targets import Destinations
from hermes.cron.tools import cronjob_tool
from hermes.delegation.run import Delegation
from hermes.delegation.tool import delegate_tool
from hermes.environments.base import open_environment
from hermes.environments.docker import DockerEnvironment
from hermes.environments.local import LocalEnvironment
from hermes.environments.ssh import SSHEnvironment
from hermes.home import Home
from hermes.learning.curator import home_curator
from hermes.learning.service import build_learning
from hermes.mcp.service import McpService, open_mcp
from hermes.memory.base import MemoryProvider
from hermes.memory.builtin import builtin_memory
from hermes.memory.service import no_memory
from hermes.messaging.outbound import Outbound
from hermes.messaging.tool import send_message_tool
from hermes.plugins.host import plugin_host
from hermes.plugins.shell_hooks import ShellHooks
from hermes.plugins.wiring import (
    lazy,
    model_client,
    plugin_environment,
    plugin_events,
    plugin_skills,
    plugin_toolsets,
    selector_key,
)
from hermes.sessions.store import open_session_store
from hermes.skills.store import SkillsStore, skills_store
from hermes.skills.tools import skill_tools
from hermes.tools.registry import build_tool_registry
from hermes.vision.tool import vision_analyze_tool
from hermes.voice.service import Voice
from hermes.voice.tool import text_to_speech_tool
from hermes.web.extract_tool import web_extract_tool
from hermes.web.search import configured_backend, web_search_tool


def _tool_specs_of(memory: MemoryProvider, skills: SkillsStore,
                   environ: Mapping[str, str], jobs: Jobs,
                   delegation: DelegationConfig, web: Any, web_model: Any,
                   web_search_providers: Any, outbound: Outbound) -> list[Any]:
    """Tools that services contribute: the memory service's (``tool_specs()``), the
    skill tools over the skills store, the ``cronjob`` tool over the profile's jobs,
    ``delegate_task`` as ``delegation`` configures it, ``web_search`` over ``web.backend``
    (a plugin's from ``web_search_providers``) and ``web_extract`` under ``web``
    (``web_model`` gives the model that condenses long pages, built when first needed;
    the backend extracts pages where it offers that) and ``send_message`` over the
    profile's chats (``outbound``)."""
    return [*memory.tool_specs(), *skill_tools(skills, environ=environ), cronjob_tool(jobs),
            delegate_tool(delegation), send_message_tool(outbound),
            web_search_tool(web, lambda: configured_backend(web, web_search_providers)),
            web_extract_tool(web, web_model,
                             lambda: configured_backend(web, web_search_providers))]


def _with_browser(specs: list[Any], browser: BrowserService, vision: Any = None,
                  web: Any = None, model: Any = None, voice: Voice | None = None) -> list[Any]:
    """The services' tools, the ``browser`` toolset's (hidden without a browser),
    ``vision_analyze`` (``vision.*``; ``last_screenshot`` is the browser's) and
    ``text_to_speech`` (``tts.*``; hidden while it is ``none``)."""
    return [*specs, *browser_tools(browser),
            vision_analyze_tool(vision, web, model, browser.last_screenshot),
            text_to_speech_tool(voice)]


def _runtime_events(plugins: Any, shell_hooks: Any, browser: BrowserService) -> Any:
    """The runtime's event bus (``plugin_events``); a session's end closes its browser
    context."""
    return browser.subscribe(plugin_events(plugins, shell_hooks))


def _contributed_toolsets(plugins: Any, mcp: McpService) -> list[Any]:
    """Toolsets added at run time: the plugins', then one per MCP server."""
    return [*plugin_toolsets(plugins), *mcp.toolsets()]


def _review_specs_of(memory: MemoryProvider, skills: SkillsStore,
                     environ: Mapping[str, str]) -> list[Any]:
    """The background review's tools: memory's, and the skill tools writing as ``review``."""
    return [*memory.tool_specs(), *skill_tools(skills, actor="review", environ=environ)]


def _model_named_by(main: Any, settings: Any, key: str) -> Any:
    """A provider of the model that the setting ``key`` names at the main provider (the
    main model itself when unset)."""
    return providers.Singleton(
        summariser_client, main=main,
        provider=providers.Callable(attrgetter("provider"), settings),
        model=providers.Callable(attrgetter(key), settings),
    )


class RuntimeContainer(containers.DeclarativeContainer):
    """Providers for one runtime. ``home``, ``settings`` and ``environ`` are given."""

    home = providers.Dependency(instance_of=Home)
    settings = providers.Dependency(instance_of=HermesConfig)
    environ = providers.Dependency(instance_of=dict)
    config = providers.Configuration(strict=True)
    """The same settings as plain values, for selectors keyed by option names."""

    secrets = providers.Singleton(
        Secrets, env_file=home.provided.env_file, environ=environ,
        precedence=settings.provided.secrets.precedence,
        environment_files=settings.provided.secrets.environment_files)

    sessions = providers.Resource(open_session_store, path=home.provided.sessions_db)

    plugins = providers.Singleton(plugin_host, home=home, settings=settings.provided.plugins,
                                  environ=environ, secrets=secrets)
    """The home's plugins (``plugins.*``), loaded when what they register is first used."""
    shell_hooks = providers.Singleton(ShellHooks, home=home, hooks=settings.provided.hooks,
                                      environ=environ)
    """Commands the config runs on hook events (``hooks``), once accepted."""

    mcp = providers.Resource(open_mcp, home=home, servers=settings.provided.mcp_servers,
                             environ=environ)
    """The servers of ``mcp_servers``, started with the runtime (in parallel); their tools
    are ``mcp_<server>_<tool>`` in the toolsets ``mcp-<server>``."""

    # ``.provided.provider`` would name the provider object itself, hence attrgetter.
    model = providers.Singleton(
        model_client, settings=providers.Callable(attrgetter("provider"), settings),
        host=plugins.provider,
    )

    memory = providers.Selector(
        config.memory.backend,
        builtin=providers.Singleton(builtin_memory, home=home,
                                    settings=settings.provided.memory,
                                    extra=providers.Callable(lazy, plugins.provider,
                                                             "memory_providers")),
        none=providers.Singleton(no_memory, home=home, settings=settings.provided.memory,
                                 extra=providers.Callable(lazy, plugins.provider,
                                                          "memory_providers")),
    )
    """MEMORY.md/USER.md (``builtin``) or nothing (``none``), plus ``memory.providers``."""

    skills = providers.Singleton(skills_store, home=home, settings=settings.provided.skills,
                                 plugin_skills=providers.Callable(plugin_skills,
                                                                  plugins.provider))
    """The home's skills, ``skills.directories`` and the bundled ones (``skills.*``)."""

    cron_store = providers.Singleton(job_store, home=home, settings=settings.provided.cron,
                                     environ=environ)
    destinations = providers.Singleton(Destinations.of, settings.provided.platforms)
    jobs = providers.Singleton(Jobs, store=cron_store, skills=skills, destinations=destinations)
    """The profile's scheduled jobs, changed with every check (``hermes cron``, ``cronjob``)."""

    outbound = providers.Singleton(Outbound, platforms=settings.provided.platforms)
    """The chats ``send_message`` may reach; the front door sets how it sends (``sender``)."""

    web_model = _model_named_by(model, settings, "web.model")
    """The model that condenses long pages for ``web_extract`` (``web.model``)."""

    browser = providers.Resource(
        open_browser, home=home, settings=settings.provided.browser,
        web=settings.provided.web,
        providers=providers.Callable(lazy, plugins.provider, "browser_providers"),
        environ=environ)
    """The ``browser`` toolset's browser (``browser.*``): started at the first browser
    tool call, a context per session, closed with the runtime."""

    voice = providers.Singleton(Voice, stt=settings.provided.stt, tts=settings.provided.tts)
    """Speech in and out (``stt``, ``tts``); its commands run in ``environment`` (given
    below, where that is declared)."""

    tools = providers.Singleton(
        build_tool_registry,
        enabled=settings.provided.toolsets.enabled,
        disabled_tools=settings.provided.toolsets.disabled_tools,
        environ=environ,
        specs=providers.Callable(_with_browser, providers.Callable(
            _tool_specs_of, memory, skills, environ, jobs, settings.provided.delegation,
            settings.provided.web, web_model.provider,
            providers.Callable(lazy, plugins.provider, "web_search_providers"), outbound),
            browser,
            settings.provided.vision, settings.provided.web, model.provider, voice),
        contributed=providers.Callable(_contributed_toolsets, plugins, mcp),
    )

    _env_settings = settings.provided.environment
    environment = providers.Resource(
        open_environment,
        environment=providers.Selector(
            providers.Callable(selector_key, config.environment.kind),
            local=providers.Factory(LocalEnvironment, home=home, cwd=_env_settings.cwd,
                                    timeout=_env_settings.timeout, environ=environ,
                                    sandbox=_env_settings.local.sandbox, secrets=secrets,
                                    env_passthrough=_env_settings.local.env_passthrough),
            docker=providers.Factory(DockerEnvironment, home=home,
                                     settings=_env_settings.docker, cwd=_env_settings.cwd,
                                     timeout=_env_settings.timeout, environ=environ,
                                     secrets=secrets),
            ssh=providers.Factory(SSHEnvironment, home=home, settings=_env_settings.ssh,
                                  cwd=_env_settings.cwd, timeout=_env_settings.timeout,
                                  environ=environ),
            plugin=providers.Factory(plugin_environment, home=home, settings=_env_settings,
                                     environ=environ, host=plugins.provider),
        ),
    )

    voice.add_kwargs(environment=environment)

    hooks = providers.Singleton(_runtime_events, plugins, shell_hooks, browser)
    """The runtime's event bus: the plugins' and shell hooks' callbacks; each session adds
    its own observers (memory, learning, the UI) on a scope of it."""

    summariser = _model_named_by(model, settings, "agent.compression.model")
    """The model that writes context-compression summaries (``agent.compression.model``)."""

    judge = _model_named_by(model, settings, "approvals.judge_model")
    """The model that judges flagged commands in ``approvals.mode: smart``."""

    review_model = _model_named_by(model, settings, "learning.model")
    """The model of the background review (``learning.model``)."""

    learning = providers.Singleton(
        build_learning, home=home, settings=settings.provided.learning, main_tools=tools,
        specs=providers.Callable(_review_specs_of, memory, skills, environ),
        environment=environment, environ=environ, model=review_model,
    )
    """Background reviews after turns (``learning.*``)."""

    curator = providers.Singleton(home_curator, home=home, skills=skills,
                                  settings=settings.provided.curator)
    """Upkeep of the home's skills (``curator.*``)."""

    agent_factory = providers.Factory(
        AgentFactory,
        deps=providers.Factory(
            AgentDeps,
            home=home,
            environ=environ,
            settings=settings.provided.agent,
            model=model,
            tools=tools,
            environment=environment,
            memory=memory,
            sessions=sessions,
            hooks=hooks,
            skills=skills,
            summariser=summariser,
            approvals=settings.provided.approvals,
            environment_files=settings.provided.secrets.environment_files,
            judge=judge,
            learning=learning,
            plugins=plugins,
            delegation=settings.provided.delegation,
            delegate=providers.Object(Delegation),
            vision=settings.provided.vision,
        ),
    )

    conversations = providers.Singleton(Conversations, factory=agent_factory)
    """Every front door's sessions and turns (open, run, count, interrupt, end)."""

    cron = providers.Singleton(CronService, store=cron_store, conversations=conversations,
                               skills=skills, destinations=destinations,
                               keep_outputs=settings.provided.cron.keep_outputs)
    """Runs the profile's jobs (the gateway's ticks, ``hermes cron tick | run``)."""


class Runtime:
    """One profile's running services. Use as a context manager to start and stop them."""

    def __init__(self, container: RuntimeContainer):
        self.container = container

    @property
    def home(self) -> Home:
        return self.container.home()

    @property
    def settings(self) -> HermesConfig:
        return self.container.settings()

    def start(self) -> Runtime:
        self.container.init_resources()
        return self

    def close(self) -> None:
        """Stop every service: the plugins' own session ended and memory first (it may
        flush background syncs)."""
        try:
            try:
                self.container.plugins().close()
            finally:
                self.container.memory().shutdown()
        finally:
            self.container.shutdown_resources()

    def __enter__(self) -> Runtime:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_runtime(home: Home, settings: HermesConfig, environ: Mapping[str, str] | None = None,
                 *, raw: Mapping[str, Any] | None = None, require_key: bool = True) -> Runtime:
    """The one way a front door gets a running runtime: the pre-checks first, then the
    home made, the runtime built and started; the caller closes it (``with``).

    A provider without its key is refused here, before anything exists, or — with
    ``require_key=False``, for a front door that serves more than conversations (``mcp
    serve`` lists sessions) — at each ``conversations.open``, before a session exists.
    ``raw``: the composed values before interpolation (names the missing secret)."""
    problem = key_problem(settings, raw, home.name, home.env_file)
    if problem is not None and require_key:
        raise MissingKey(problem)
    home.ensure()
    runtime = build_runtime(home, settings, environ)
    runtime.container.conversations.add_kwargs(refusal=problem)
    try:
        return runtime.start()
    except BaseException:
        runtime.close()
        raise


def build_runtime(
    home: Home, settings: HermesConfig, environ: Mapping[str, str] | None = None
) -> Runtime:
    """Build (but do not start) the runtime of ``home`` from its validated config."""
    container = RuntimeContainer(
        home=home, settings=settings, environ=dict(os.environ if environ is None else environ)
    )
    container.config.from_dict(settings.model_dump())
    # dispatch_tool outside a session opens one through the runtime's own conversations
    container.plugins.add_kwargs(conversations=container.conversations.provider)
    return Runtime(container)
