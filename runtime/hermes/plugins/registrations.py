"""What one runtime's plugins registered: tools, hooks, commands, skills, providers.

``Registrations`` belongs to one runtime (the container's ``plugins``); nothing here
is module-global, so two profiles in one gateway may load different plugins. Each
plugin registers into its own ``PluginRecord`` first; only when its ``register(ctx)``
returned is the record merged, so a plugin that fails leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes.events import Callback, HookBus
from hermes.tools.base import ToolSpec
from hermes.tools.toolsets import ToolsetSpec

Status = Literal["loaded", "disabled", "not enabled", "missing env", "failed"]


@dataclass(frozen=True)
class SlashCommand:
    """``/name [args]`` in chat and in every gateway platform."""

    name: str
    handler: Callable[[str], Any]
    """Called with the text after the command; returns the reply (may be async)."""
    description: str
    plugin: str
    args_hint: str = ""


@dataclass(frozen=True)
class CliCommand:
    """``hermes <name> ...``: an argparse tree the plugin builds (``setup``)."""

    name: str
    help: str
    setup: Callable[[Any], None] | None
    """``setup(parser)`` adds arguments and sub-parsers."""
    handler: Callable[[Any], Any] | None
    """Called with the parsed ``argparse.Namespace`` (unless ``set_defaults(func=...)``
    names another)."""
    plugin: str
    description: str = ""


@dataclass
class PluginRecord:
    """What one plugin registered (or tried to)."""

    key: str
    name: str
    tools: list[ToolSpec] = field(default_factory=list)
    toolsets: dict[str, str] = field(default_factory=dict)
    """Toolset names its tools use, with a description."""
    hooks: list[Callback] = field(default_factory=list)
    commands: dict[str, SlashCommand] = field(default_factory=dict)
    cli_commands: dict[str, CliCommand] = field(default_factory=dict)
    skills: dict[str, Path] = field(default_factory=dict)
    """``plugin:skill`` -> the skill's directory."""
    model_providers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    platforms: dict[str, Callable[..., Any]] = field(default_factory=dict)
    memory_providers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    environments: dict[str, Callable[..., Any]] = field(default_factory=dict)
    web_search_providers: dict[str, Any] = field(default_factory=dict)
    """``web.backend: plugin:<name>`` names: hermes-agent's ``WebSearchProvider`` instances."""
    browser_providers: dict[str, Any] = field(default_factory=dict)
    """``browser.backend`` names: hermes-agent's ``BrowserProvider`` instances."""
    unsupported: list[str] = field(default_factory=list)
    """What it registered that Hermes does not support yet (``middleware``, ...)."""
    ignored_hooks: list[str] = field(default_factory=list)
    """Hook events it subscribed to that this Hermes does not have."""

    def summary(self) -> str:
        """``2 tools (a, b), 1 hook (post_tool_call), ...``: what it registered."""
        parts = [_count("tool", [t.name for t in self.tools]),
                 _count("hook", [h.event for h in self.hooks]),
                 _count("slash command", [f"/{n}" for n in self.commands]),
                 _count("CLI command", list(self.cli_commands)),
                 _count("skill", list(self.skills)),
                 _count("model provider", list(self.model_providers)),
                 _count("platform", list(self.platforms)),
                 _count("memory provider", list(self.memory_providers)),
                 _count("environment", list(self.environments)),
                 _count("browser provider", list(self.browser_providers)),
                 _count("web search provider", list(self.web_search_providers))]
        done = ", ".join(p for p in parts if p) or "nothing"
        if self.unsupported:
            done += f"; not supported yet: {', '.join(self.unsupported)}"
        if self.ignored_hooks:
            done += f"; unknown hooks ignored: {', '.join(self.ignored_hooks)}"
        return done


def _count(what: str, names: list[str]) -> str:
    if not names:
        return ""
    return f"{len(names)} {what}{'' if len(names) == 1 else 's'} ({', '.join(names)})"


@dataclass(frozen=True)
class PluginState:
    """How one discovered plugin fared in a runtime."""

    key: str
    status: Status
    detail: str = ""
    """Why it was not loaded, or what it registered."""
    record: PluginRecord | None = None


@dataclass
class Registrations:
    """Everything the loaded plugins of one runtime registered."""

    events: HookBus = field(default_factory=HookBus)
    records: list[PluginRecord] = field(default_factory=list)
    states: list[PluginState] = field(default_factory=list)

    def merge(self, record: PluginRecord) -> None:
        for callback in record.hooks:
            self.events.register(callback)
        self.records.append(record)

    def tool_names(self) -> set[str]:
        return {spec.name for record in self.records for spec in record.tools}

    def toolsets(self) -> list[tuple[ToolsetSpec, list[ToolSpec]]]:
        """The plugins' toolsets with their tools, in load order."""
        grouped: dict[str, tuple[ToolsetSpec, list[ToolSpec]]] = {}
        for record in self.records:
            for spec in record.tools:
                description = record.toolsets.get(spec.toolset, "")
                toolset = grouped.setdefault(spec.toolset, (
                    ToolsetSpec(spec.toolset, description), []))
                toolset[1].append(spec)
        return list(grouped.values())

    def collected(self, attribute: str) -> dict[str, Any]:
        """One kind of registration of every plugin (``PluginRecord``'s ``attribute``:
        ``model_providers``, ``environments``, ...), by name."""
        merged: dict[str, Any] = {}
        for record in self.records:
            merged.update(getattr(record, attribute))
        return merged

    @property
    def commands(self) -> dict[str, SlashCommand]:
        return self.collected("commands")

    @property
    def cli_commands(self) -> dict[str, CliCommand]:
        return self.collected("cli_commands")
