"""The ``plugins`` section (which plugins load, where they are found) and ``hooks`` (shell
commands run on hook events), checked when a config is composed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from hermes.config.sections import NonBlank, Regex, Section
from hermes.errors import did_you_mean, one_of
from hermes.events import EVENTS, TOOL_EVENTS

PLUGIN_CHOICE = re.compile(r"plugin:[a-z0-9][a-z0-9_-]{0,31}")
"""How config names what a plugin provides: ``plugin:NAME``."""


def _builtin_or_plugin(*builtins: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value in builtins or PLUGIN_CHOICE.fullmatch(value):
            return value
        raise PydanticCustomError("unknown_name", "'{value}' is not one of {known}{hint}; a "
                                  "plugin's is named plugin:NAME", {
                                      "value": value, "known": one_of(builtins),
                                      "hint": did_you_mean(value, builtins)})
    return check


EnvironmentKind = Annotated[str, AfterValidator(_builtin_or_plugin("local", "docker", "ssh"))]
"""``environment.kind``: a built-in environment, or ``plugin:NAME`` (checked when the
plugins load)."""
MemoryProviderName = Annotated[str, AfterValidator(_builtin_or_plugin("factstore"))]
"""An entry of ``memory.providers``: a built-in provider, or ``plugin:NAME``."""


SHADOWING_SOURCES = ("home", "directory", "project", "entrypoint")
"""Plugin sources that come before another (``plugins/discovery.py``), so may shadow."""


def _check_shadow_consent(value: str) -> str:
    source, _, name = value.partition(":")
    if source in SHADOWING_SOURCES and name and not any(c.isspace() for c in name):
        return value
    raise PydanticCustomError("as_written", "'{value}': expected SOURCE:NAME with SOURCE "
                              "one of {known}, e.g. project:tool-log",
                              {"value": value, "known": one_of(SHADOWING_SOURCES)})


ShadowConsent = Annotated[str, AfterValidator(_check_shadow_consent)]
"""An entry of ``plugins.allow_shadow``."""


class PluginsConfig(Section):
    """Which plugins a runtime loads, and where it finds them besides the home's own
    ``plugins/``."""

    enabled: list[str] = Field(default_factory=list)
    """Plugins to load, by name (or ``category/name``): plugins are opt-in (``hermes
    plugins enable NAME``)."""
    disabled: list[str] = Field(default_factory=list)
    """Plugins never loaded, even where ``enabled`` names them (``hermes plugins disable
    NAME``)."""
    directories: list[NonBlank] = Field(default_factory=list)
    """More directories shaped like ``$HERMES_HOME/plugins/`` (one sub-directory with a
    ``plugin.yaml`` per plugin), read-only, searched after the home's; e.g. what the
    NixOS module's ``extraPlugins`` renders."""
    project: bool = False
    """Also find plugins in ``.hermes/plugins/`` of the working directory (a repository's
    own plugins; they still need enabling). Only for repositories you trust."""
    allow_shadow: list[ShadowConsent] = Field(default_factory=list)
    """``SOURCE:NAME`` entries (``project:tool-log``): the plugin NAME found in SOURCE
    (``home``, ``directory``, ``project`` or ``entrypoint``) may replace an enabled plugin
    of the same name from a later source. Without it such a plugin is skipped with a
    warning and the other one loads (``hermes plugins enable NAME --source SOURCE`` adds
    the entry)."""
    hook_timeout: float = Field(10.0, gt=0)
    """Seconds one plugin hook callback may take; a slower one is skipped (one on
    ``pre_tool_call`` blocks the call instead)."""


class ShellHook(Section):
    """A command run on a hook event, without a shell: the event arrives as JSON on its
    standard input; it may answer with JSON on standard output (``{"action": "block",
    "message": ...}`` before a tool, ``{"context": ...}`` before the model)."""

    command: NonBlank
    """The program and its arguments, split like a shell would (no pipes or
    redirections: put those in a script); ``~`` is expanded."""
    matcher: Regex | None = None
    """A regular expression the tool's whole name must match (``pre_tool_call`` and
    ``post_tool_call`` only); unset: every tool."""
    timeout: float = Field(30.0, gt=0, le=300)
    """Seconds it may run; past them it is stopped (and a ``pre_tool_call`` hook blocks
    the call)."""


def check_hook_events(value: Any) -> Any:
    """``hooks`` keys are event names; a matcher only where a tool is involved."""
    if not isinstance(value, dict):
        return value
    for event, entries in value.items():
        if event not in EVENTS:
            raise PydanticCustomError("unknown_name", "unknown hook event '{event}'{hint}; "
                                      "events: {known}", {"event": event, "known":
                                                          one_of(EVENTS), "hint":
                                                          did_you_mean(str(event), EVENTS)})
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and entry.get("matcher") and event not in TOOL_EVENTS:
                raise PydanticCustomError("matcher", "{event}: a matcher applies to "
                                          "pre_tool_call and post_tool_call only",
                                          {"event": event})
    return value


ShellHooks = Annotated[dict[str, list[ShellHook]], BeforeValidator(check_hook_events)]
"""``hooks``: shell hooks by event."""
