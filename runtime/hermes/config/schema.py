"""The typed schema every composed config is validated against.

Each field's docstring is its documentation (``hermes config explain`` and the
README draw on it). Unknown keys are errors (``extra="forbid"``), so a typo in
YAML never silently does nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    SerializeAsAny,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from hermes.config.browser_schema import BrowserConfig
from hermes.config.cron_schema import CronConfig, HomeChannel
from hermes.config.dashboard_schema import DashboardConfig
from hermes.config.delegation_schema import DelegationConfig
from hermes.config.groups import GROUPS
from hermes.config.learning_schema import CuratorConfig, LearningConfig
from hermes.config.mcp_schema import McpServers
from hermes.config.platform_schema import PlatformSettings, check_kind, typed_settings
from hermes.config.plugins_schema import (
    EnvironmentKind,
    MemoryProviderName,
    PluginsConfig,
    ShellHooks,
)
from hermes.config.sections import NonBlank, Section
from hermes.config.toolset_names import tool_error, toolset_error
from hermes.config.voice_schema import SttConfig, TtsConfig
from hermes.config.web_schema import WebConfig
from hermes.errors import did_you_mean, one_of

__all__ = ["GROUPS", "HermesConfig", "NonBlank", "Section"]


def _known(error: Callable[[list[str]], str | None]) -> Callable[[list[str]], list[str]]:
    def check(names: list[str]) -> list[str]:
        message = error(names)
        if message:
            raise PydanticCustomError("unknown_name", message)
        return names
    return check


ToolsetNames = Annotated[list[str], AfterValidator(_known(toolset_error))]
"""Names of built-in toolsets (``hermes.config.tool_catalog``)."""
ToolNames = Annotated[list[str], AfterValidator(_known(tool_error))]
"""Names of built-in tools (``hermes.config.tool_catalog``)."""


ApiMode = Literal["auto", "chat_completions", "anthropic_messages", "responses", "bedrock_converse"]


class FallbackConfig(Section):
    provider: NonBlank
    """litellm provider id of the fallback (openai, anthropic, openrouter, ...)."""
    model: NonBlank
    """Model name at that provider."""
    api_base: NonBlank | None = None
    """Base URL, for OpenAI-compatible endpoints."""
    api_key: str | None = None
    """Key, by reference: ``${secret:NAME}``."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Parameters for this fallback only (e.g. AWS credentials for Bedrock), over the
    primary provider's ``extra``."""


class ProviderConfig(Section):
    name: NonBlank
    """The option's name (the YAML file under ``conf/provider/``)."""
    provider: NonBlank
    """litellm provider id: openai, anthropic, openrouter, ollama, bedrock, ..."""
    model: NonBlank
    """Model name, e.g. ``gpt-4o`` or ``claude-sonnet-4-5``."""
    api_base: NonBlank | None = None
    """Base URL; required for custom OpenAI-compatible endpoints."""
    api_key: str | None = None
    """API key, by reference to the home's ``.env``: ``${secret:OPENAI_API_KEY}``."""
    requires_key: bool = True
    """False for local servers (ollama) that need no key."""
    api_mode: ApiMode = "auto"
    """Wire format; ``auto`` detects it from provider, model and base URL."""
    vision: bool | None = None
    """Whether the model reads images; null: litellm's model data says (an unknown model
    reads none). A model without vision gets ``vision.model``'s description instead."""
    timeout: float = Field(120.0, gt=0)
    """Seconds before one model request times out."""
    max_retries: int = Field(3, ge=0)
    """Retries for retryable failures (rate limits, overloads, timeouts)."""
    retry_backoff: float = Field(1.0, ge=0)
    """Base seconds of the jittered exponential backoff between retries."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Extra parameters passed through to the provider (temperature, ...)."""
    fallbacks: list[FallbackConfig] = Field(default_factory=list)
    """Providers tried in order when this one fails for good."""


class ToolsetsConfig(Section):
    name: NonBlank
    """The option's name (the YAML file under ``conf/toolsets/``)."""
    enabled: ToolsetNames
    """Toolsets whose tools the model may see: file, terminal, process, todo, clarify,
    session_search, memory, skills, core (``--toolsets`` and ``HERMES_TOOLSETS`` take
    these names, or a group option such as ``coding``)."""
    disabled_tools: ToolNames = Field(default_factory=list)
    """Individual tools removed from the enabled toolsets."""


class MemoryConfig(Section):
    name: NonBlank
    """The option's name (the YAML file under ``conf/memory/``)."""
    backend: Literal["builtin", "none"]
    """Where memories live: ``builtin`` files in the home (MEMORY.md, USER.md and the
    ``memory`` tool), or ``none``."""
    memory_char_limit: int = Field(2200, gt=0)
    """Character limit of MEMORY.md (the agent's notes)."""
    user_char_limit: int = Field(1375, gt=0)
    """Character limit of USER.md (who the user is)."""
    providers: list[MemoryProviderName] = Field(default_factory=list)
    """External memory providers run alongside the backend, e.g. ``[factstore]`` (a
    local SQLite fact store in ``memories/facts.db``), or an enabled plugin's
    (``plugin:NAME``)."""
    prefetch_timeout: float = Field(3.0, gt=0)
    """Seconds the providers' recall before a turn may take; a slower or failing
    provider is skipped for that turn."""
    recall_limit: int = Field(5, gt=0)
    """Most items one provider recalls into a turn (fact store: facts)."""


def _sandbox_user(value: str) -> str:
    if not re.fullmatch(r"host|root|[0-9]+(:[0-9]+)?", value):
        raise PydanticCustomError("sandbox_user", "expected host, root or UID[:GID]")
    return value


class DockerSettings(Section):
    """The sandbox: one long-lived container per (profile, task), found again by its labels."""

    image: NonBlank = "hermes-sandbox:latest"
    """Image the sandbox container runs (it must exist locally; nothing is pulled)."""
    task: NonBlank = "default"
    """Which of the profile's sandboxes to use: one container per (profile, task)."""
    network: NonBlank = "none"
    """Docker network of the sandbox: ``none`` (no network), ``bridge``, or a network's name."""
    cpus: float | None = Field(1.0, gt=0)
    """CPU limit (cores); unset: no limit."""
    memory: str = "2g"
    """Memory limit (docker syntax: ``512m``, ``2g``)."""
    pids_limit: int = Field(512, gt=0)
    """Most processes the sandbox may run at once (a fork bomb stops there)."""
    workspace: str | None = None
    """Host directory mounted at the working directory; unset: a docker volume of the
    profile and task. Never the profile's home."""
    volumes: list[str] = Field(default_factory=list)
    """Extra mounts, ``/host/path:/container/path[:ro]``."""
    env: list[str] = Field(default_factory=list)
    """Names of the variables (process environment or the profile's ``.env``) passed into
    the sandbox; no other variable or secret is."""
    read_only: bool = False
    """Read-only root filesystem (``/tmp`` and the workspace stay writable)."""
    user: Annotated[str, AfterValidator(_sandbox_user)] = "host"
    """Who commands run as: ``host`` (the uid:gid of whoever starts the sandbox, so what
    they write in the workspace is theirs and a setuid bit there grants nothing),
    ``root`` (what a package manager needs), or ``UID[:GID]``."""
    cap_add: list[str] = Field(default_factory=lambda: [
        "CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"])
    """Capabilities kept (all others are dropped): what a package manager needs (they
    take effect only for ``user: root``)."""
    idle_timeout: float = Field(3600.0, gt=0)
    """Seconds a sandbox may sit unused before the reaper removes it."""
    approvals: bool = True
    """Whether dangerous commands need approval inside the sandbox."""

    @model_validator(mode="before")
    @classmethod
    def _network_switch(cls, data: Any) -> Any:
        """``network: false``/``true`` (the old switch) mean ``none``/``bridge``."""
        if isinstance(data, dict) and isinstance(data.get("network"), bool):
            return {**data, "network": "bridge" if data["network"] else "none"}
        return data


class SSHSettings(Section):
    host: NonBlank | None = None
    """Host to run commands on."""
    user: str | None = None
    """Login name; defaults to the current user."""
    port: int = Field(22, gt=0, lt=65536)
    """SSH port."""
    key_file: str | None = None
    """Private key file; the agent's default identity when unset."""
    known_hosts: str | None = None
    """Known-hosts file checked against the host's key; unset: ``~/.ssh/known_hosts``."""
    accept_unknown_host: bool = False
    """Connect to a host whose key is not in the known-hosts file (and remember it there)."""
    connect_timeout: float = Field(15.0, gt=0)
    """Seconds to connect and authenticate."""


def _sandbox_path(path: str) -> str:
    if not path.startswith(("/", "~")):
        raise PydanticCustomError("relative_path", "{path} is relative: write an absolute "
                                  "path or one under ~ (~/.cache/pip)", {"path": repr(path)})
    return path


SandboxPath = Annotated[str, AfterValidator(_sandbox_path)]
"""An absolute path or one under ``~`` (the runtime's ``HOME``)."""


class SandboxSettings(Section):
    """How commands the agent starts on this machine are confined by the operating system
    (``hermes sandbox explain`` shows the result for the current profile)."""

    mode: Literal["workspace-write", "read-only", "off"] = "workspace-write"
    """``workspace-write``: commands read everything but the Hermes root and credential
    stores, and write only in the working directory, a private /tmp and ``allow_write``;
    ``read-only``: they write nowhere (bubblewrap still gives a private, throw-away /tmp);
    ``off``: no confinement."""
    backend: Literal["auto", "bubblewrap", "landlock"] = "auto"
    """``auto``: bubblewrap when it works here, else Landlock, else unconfined (and said
    so); naming one makes commands fail when it does not work."""
    network: Literal["on", "off"] = "on"
    """``off``: commands cannot open network connections (loopback included)."""
    deny_read: list[SandboxPath] = Field(default_factory=list)
    """More files or directories commands cannot read, besides the Hermes root and the
    credential stores (``~/.ssh``, ``~/.aws``, ``~/.config/gcloud``, ``~/.kube``,
    ``~/.docker/config.json``, ``~/.netrc``, ``~/.git-credentials``)."""
    allow_write: list[SandboxPath] = Field(default_factory=list)
    """More directories commands may write in (``workspace-write`` only), e.g.
    ``[~/.cache/pip]``; missing ones are created."""

    @model_validator(mode="before")
    @classmethod
    def _yaml_switches(cls, data: Any) -> Any:
        return _switch_words(_switch_words(data, "network", on="on"), "mode",
                             on="workspace-write")


class LocalSettings(Section):
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    """OS confinement of the commands (terminal, background processes, search)."""
    env_passthrough: list[NonBlank] = Field(default_factory=list)
    """Environment variables commands see although they hold a secret (a name ending in
    ``_KEY``, ``_TOKEN``, ``_SECRET``, ``_PASSWORD``..., one the image loaded from a
    ``*_FILE``, or a value containing a secret the runtime loaded), e.g.
    ``[GITHUB_TOKEN]`` for a task that pushes; every other such variable is withheld."""


class EnvironmentConfig(Section):
    name: NonBlank
    """The option's name (the YAML file under ``conf/environment/``)."""
    kind: EnvironmentKind
    """Where tools run commands: local, docker, ssh, or an enabled plugin's environment
    (``plugin:NAME``)."""
    cwd: str | None = None
    """Working directory for commands; the current directory when unset."""
    timeout: float = Field(180.0, gt=0)
    """Default timeout of a foreground command, in seconds."""
    docker: DockerSettings = DockerSettings()
    """Settings used when ``kind`` is ``docker``."""
    ssh: SSHSettings = SSHSettings()
    """Settings used when ``kind`` is ``ssh``."""
    local: LocalSettings = Field(default_factory=LocalSettings)
    """Settings used when ``kind`` is ``local``."""
    plugin: dict[str, Any] = Field(default_factory=dict)
    """Settings of a plugin's environment (``kind: plugin:NAME``), handed to it as
    they are."""


def _user_ids(value: Any) -> Any:
    """User ids as strings: YAML reads Telegram's numeric ids as numbers."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    return value


class PlatformConfig(Section):
    kind: Annotated[NonBlank, AfterValidator(check_kind)]
    """Adapter name: one of ``hermes.config.platform_schema.PLATFORM_SETTINGS`` (api_server)."""
    token: str | None = None
    """Credential, by reference: ``${secret:TELEGRAM_BOT_TOKEN}``."""
    allowed_users: Annotated[list[str], BeforeValidator(_user_ids)] = Field(
        default_factory=list)
    """Users allowed to talk to the agent (ids as the platform gives them; ``a,b`` is a
    list); empty means nobody but users paired with ``hermes pairing approve``."""
    home_channel: HomeChannel = None
    """The chat scheduled jobs deliver to when they name just this platform (``deliver:
    telegram``): ``CHAT_ID`` or ``CHAT_ID:THREAD``."""
    settings: SerializeAsAny[PlatformSettings] = Field(default_factory=dict,
                                                       validate_default=True)
    """Adapter-specific settings, typed by ``kind`` (``hermes.config.platform_schema``)."""

    @field_validator("settings", mode="before")
    @classmethod
    def _typed_settings(cls, value: Any, info: ValidationInfo) -> PlatformSettings:
        return typed_settings(info.data.get("kind"), value)


class PlatformsConfig(Section):
    name: NonBlank
    """The option's name (the YAML file under ``conf/platforms/``)."""
    enabled: dict[str, PlatformConfig] = Field(default_factory=dict)
    """Messaging platforms the gateway connects, by name."""

    @model_validator(mode="after")
    def _targets_are_enabled(self) -> PlatformsConfig:
        for name, platform in self.enabled.items():
            for key, target in platform.settings.targets().items():
                chosen = target.partition(":")[0]
                if chosen not in self.enabled:
                    raise ValueError(
                        f"enabled.{name}.settings.{key}: {target!r} names platform "
                        f"{chosen!r}, which is not enabled{did_you_mean(chosen, self.enabled)}"
                        f" (enabled: {one_of(self.enabled)})")
        return self


class CompressionConfig(Section):
    """Context compression: what happens when a conversation nears the model's window."""

    enabled: bool = True
    """Compress the conversation before it outgrows the model's context window."""
    threshold: float = Field(0.5, gt=0, le=1)
    """Compress when the estimated context reaches this fraction of the window."""
    context_window: int | None = Field(None, gt=0)
    """The model's input window in tokens; unset: litellm's model info, else 32768."""
    protect_first: int = Field(3, ge=1)
    """Messages kept verbatim at the start (system prompt and the first exchange);
    extended so the kept part ends on a whole step, never inside a tool call."""
    protect_recent_fraction: float = Field(0.2, gt=0, lt=1)
    """Recent messages kept verbatim, as a fraction of the window (at least the last step)."""
    model: str | None = None
    """Model that writes the summaries, at the main provider; unset: the main model."""
    summary_max_words: int = Field(600, gt=0)
    """Length the summariser is asked to keep to."""

    @model_validator(mode="after")
    def _recent_below_threshold(self) -> CompressionConfig:
        if self.protect_recent_fraction >= self.threshold:
            raise ValueError(f"protect_recent_fraction ({self.protect_recent_fraction}) must be "
                             f"below threshold ({self.threshold}) — lower it or raise threshold")
        return self


class AgentConfig(Section):
    max_iterations: int = Field(90, gt=0)
    """Model calls per user turn before the single grace call."""
    personality: str | None = None
    """Extra instructions appended to the system prompt."""
    reasoning_effort: Literal["none", "low", "medium", "high"] | None = None
    """Reasoning effort for models that support it."""
    tool_result_max_chars: int = Field(50_000, gt=0)
    """Tool results longer than this are spilled to a file."""
    turn_tool_output_max_chars: int = Field(150_000, gt=0)
    """All tool results of one model turn together; past it, results become previews."""
    compression: CompressionConfig = CompressionConfig()
    """Context compression (summaries of the earlier conversation)."""


def _switch_words(data: Any, key: str, on: str) -> Any:
    """YAML 1.1 reads an unquoted ``off`` as False and ``on`` as True: take them as
    the words they were (``off``, or the setting's ``on`` value)."""
    if isinstance(data, dict) and isinstance(data.get(key), bool):
        return {**data, key: on if data[key] else "off"}
    return data


class ApprovalsConfig(Section):
    """How dangerous terminal commands are approved (hard-blocked ones never are)."""

    mode: Literal["manual", "smart", "off"] = "manual"
    """``manual``: ask the person, refuse when nobody can answer; ``smart``: a judge
    model may approve a flagged command once when it fits the user's request, else
    as ``manual``; ``off``: run flagged commands without asking (like ``--yolo``)."""
    judge_model: str | None = None
    """Model at the main provider that judges commands in ``smart`` mode; unset: the
    main model."""
    judge_timeout: float = Field(30.0, gt=0)
    """Seconds the judge may take; past them the command is treated as ``manual``."""
    chat_timeout: float = Field(300.0, gt=0)
    """Seconds a command flagged in a messaging chat waits for ``/approve`` or ``/deny``
    from an allowed user; unanswered it is refused."""

    @model_validator(mode="before")
    @classmethod
    def _yaml_booleans(cls, data: Any) -> Any:
        return _switch_words(data, "mode", on="manual")


class GatewayConfig(Section):
    """``hermes gateway run``: the long-running process serving platforms."""

    profiles: list[str] = Field(default_factory=list)
    """Further profiles served by the same process (``--profiles`` adds to them)."""
    shutdown_grace: float = Field(30.0, ge=0)
    """Seconds running turns may finish after SIGTERM before they are interrupted."""


class RuntimeConfig(Section):
    """How the CLI reaches a warm runtime (``hermes daemon``)."""

    daemon: Literal["auto", "off"] = "auto"
    """``auto``: ``hermes -z`` and ``hermes chat`` use the profile's warm server, starting
    it on first use; ``off``: they run in-process (as ``--no-daemon`` does)."""
    idle_timeout: float = Field(600.0, gt=0)
    """Seconds without commands after which the server exits."""

    @model_validator(mode="before")
    @classmethod
    def _yaml_booleans(cls, data: Any) -> Any:
        return _switch_words(data, "daemon", on="auto")


class SkillsConfig(Section):
    """Where skills come from besides the home's own ``skills/``, and how the system
    prompt lists them."""

    directories: list[NonBlank] = Field(default_factory=list)
    """More directories shaped like ``$HERMES_HOME/skills/`` (``<name>/SKILL.md``,
    ``<category>/<name>/SKILL.md``, nested groups up to 6 deep, Claude Code's
    ``plugins/<plugin>/skills/<name>/``), read-only, searched after the home's and before
    the bundled skills; a relative one is relative to the home. E.g. what the NixOS
    module's ``extraSkills`` renders."""
    bundled: bool = True
    """Offer the skills shipped with Hermes (read-only; a home skill of the same name
    takes precedence)."""
    index_max_chars: int = Field(6000, ge=0)
    """Cap of the skills index in the system prompt (names and one-line descriptions);
    what does not fit is counted, and ``skills_list`` shows it."""


class SecretsConfig(Section):
    """Where ``${secret:NAME}`` values come from: the profile's ``.env`` and the
    process environment, which ``environment_files`` extend."""

    precedence: Literal["dotenv", "environment"] = "dotenv"
    """Which wins when both name a secret: ``dotenv`` (the profile's ``.env``) or
    ``environment``. The NixOS module sets ``environment``, so a secret its unit loads
    from ``environmentFiles`` (and rotates there) wins over a stale ``.env``."""
    environment_files: list[NonBlank] = Field(default_factory=list)
    """``NAME=value`` files that are part of the environment (the NixOS unit's
    ``EnvironmentFile=``), read by every command of the profile, so the CLI resolves
    secrets as the gateway does; the process environment wins over them. ``doctor``
    names ``.env`` entries shadowed by them, and ``config set NAME`` refuses a name they
    set under ``environment`` precedence (``--force`` writes ``.env`` anyway)."""


class VisionConfig(Section):
    """Images in: what a turn may carry and who reads them for a model without vision."""

    model: str | None = None
    """The model at the main provider that describes images for a main model that takes
    none (and answers ``vision_analyze`` then); null: such a model refuses images."""
    max_bytes: int = Field(20_000_000, gt=0)
    """Largest image accepted (a file, an upload, a URL's body), in bytes."""
    max_images: int = Field(8, gt=0)
    """Most images on one message."""


class DisplayConfig(Section):
    show_cost: bool = True
    """Show token usage and cost after each turn."""
    spinner: bool = True
    """Show a spinner while the model thinks."""


class HermesConfig(Section):
    provider: ProviderConfig
    """The model provider (config group ``provider``)."""
    toolsets: ToolsetsConfig
    """Which tools the model sees (config group ``toolsets``)."""
    memory: MemoryConfig
    """Memory backend (config group ``memory``)."""
    environment: EnvironmentConfig
    """Execution environment for tools (config group ``environment``)."""
    platforms: PlatformsConfig
    """Messaging platforms for the gateway (config group ``platforms``)."""
    web: WebConfig = Field(default_factory=lambda: WebConfig(name="ddgs", backend="ddgs"))
    """Web search backend and web request limits (config group ``web``)."""
    browser: BrowserConfig = BrowserConfig()
    """The browser of the ``browser`` toolset (config group ``browser``)."""
    stt: SttConfig = SttConfig()
    """Speech to text: voice messages transcribed before the turn (config group ``stt``)."""
    tts: TtsConfig = TtsConfig()
    """Text to speech: spoken answers and ``text_to_speech`` (config group ``tts``)."""
    agent: AgentConfig = AgentConfig()
    """The agent loop."""
    approvals: ApprovalsConfig = ApprovalsConfig()
    """Approval of dangerous terminal commands."""
    gateway: GatewayConfig = GatewayConfig()
    """The gateway process."""
    runtime: RuntimeConfig = RuntimeConfig()
    """The warm server behind the CLI."""
    plugins: PluginsConfig = PluginsConfig()
    """Which plugins load and where they are found."""
    hooks: ShellHooks = Field(default_factory=dict)
    """Shell commands run on hook events (``pre_tool_call``, ``pre_llm_call``, ...), by
    event; each needs the user's consent once (``hermes hooks accept``)."""
    mcp_servers: McpServers = Field(default_factory=dict)
    """MCP servers whose tools the agent gets (``mcp_<server>_<tool>``), by name."""
    skills: SkillsConfig = SkillsConfig()
    """Where skills are found and how the prompt lists them."""
    learning: LearningConfig = LearningConfig()
    """The background review that saves memories and skills after turns."""
    cron: CronConfig = CronConfig()
    """Scheduled jobs: time zone, outputs kept (``hermes.cron``)."""
    delegation: DelegationConfig = DelegationConfig()
    """Sub-agents (``delegate_task``): how many at once, how deep, their budget."""
    curator: CuratorConfig = CuratorConfig()
    """Upkeep of the home's skills: stale marks and archiving."""
    vision: VisionConfig = VisionConfig()
    """Images in: size and count limits, the model that describes them."""
    display: DisplayConfig = DisplayConfig()
    """Terminal output."""
    dashboard: DashboardConfig = DashboardConfig()
    """The web dashboard (``hermes dashboard``): address, port, names it answers to."""
    secrets: SecretsConfig = SecretsConfig()
    """Where secrets come from and which source wins."""

