"""The tool registry: one per runtime, never module-global.

A tool is a declared ``ToolSpec``; the registry holds the specs registered for
one runtime and shows the model only those whose toolset is enabled (directly
or through ``includes``), which are not disabled by name, whose required
environment variables are set and whose availability check passes.
``dispatch`` runs one call from the model and always returns a ``ToolResult``.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hermes.errors import ToolError
from hermes.tools.arguments import parse_arguments
from hermes.tools.base import ToolOutput, ToolResult, ToolSpec
from hermes.tools.context import ToolContext
from hermes.tools.core import CORE_TOOLSETS, core_tools
from hermes.tools.results import cap_result, error, is_error
from hermes.tools.schema import validate_arguments
from hermes.tools.toolsets import ToolsetSpec, expand_toolsets

__all__ = ["ToolRegistry", "ToolResult", "ToolSpec", "ToolsetSpec", "build_tool_registry"]


@dataclass
class ToolRegistry:
    """The tools of one runtime, filtered by its toolsets config."""

    enabled_toolsets: frozenset[str]
    """Toolset names as configured (``toolsets.enabled``), before includes."""
    disabled_tools: frozenset[str] = frozenset()
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    """Where ``requires_env`` looks for variables."""
    only: frozenset[str] | None = None
    """When set, only tools of these toolsets (with their includes) are visible, besides
    the configured ones' filter: a restriction, never a widening."""
    excluded: frozenset[str] = frozenset()
    """Toolsets never visible, whatever includes them (a cron run's ``cron``)."""
    blocked: Mapping[str, str] = field(default_factory=dict)
    """Tools hidden from this view, each with the reason a call to it is answered with
    (a sub-agent's ``clarify``: nobody answers its questions)."""
    _specs: dict[str, ToolSpec] = field(default_factory=dict)
    _toolsets: dict[str, ToolsetSpec] = field(default_factory=dict)
    _added: set[str] = field(default_factory=set)
    """Toolsets contributed with ``add_toolset`` (plugins, MCP servers): active without
    being named in ``toolsets.enabled``; shared with the ``restricted``/``without`` views."""

    def register(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"tool {spec.name!r} is already registered")
        self._specs[spec.name] = spec

    def register_all(self, specs: Iterable[ToolSpec]) -> None:
        for spec in specs:
            self.register(spec)

    def register_toolset(self, toolset: ToolsetSpec) -> None:
        if toolset.name in self._toolsets:
            raise ValueError(f"toolset {toolset.name!r} is already registered")
        self._toolsets[toolset.name] = toolset

    def add_toolset(self, toolset: ToolsetSpec, specs: Iterable[ToolSpec]) -> None:
        """Declare ``toolset`` and its tools and make it active (``only`` and ``excluded``
        still apply): how a plugin or an MCP server contributes tools at run time. A name
        that is already registered raises ``ValueError`` and nothing is added."""
        specs = list(specs)
        names = [s.name for s in specs]
        taken = [n for i, n in enumerate(names) if n in self._specs or n in names[:i]]
        if toolset.name in self._toolsets or taken:
            what = f"tool {taken[0]!r}" if taken else f"toolset {toolset.name!r}"
            raise ValueError(f"{what} is already registered")
        self.register_toolset(toolset)
        self.register_all(specs)
        self._added.add(toolset.name)

    def active_toolsets(self) -> set[str]:
        """Enabled toolsets with their includes (within ``only``); raises ``ToolsetError``
        on a cycle."""
        active = expand_toolsets(sorted(self.enabled_toolsets | self._added), self._toolsets)
        if self.only is not None:
            active &= expand_toolsets(sorted(self.only), self._toolsets)
        return active - self.excluded

    def restricted(self, toolsets: Iterable[str]) -> ToolRegistry:
        """The same tools, only those of ``toolsets`` visible (shares the declarations)."""
        return replace(self, only=frozenset(toolsets))

    def without(self, toolsets: Iterable[str]) -> ToolRegistry:
        """The same tools, but none of ``toolsets`` (shares the declarations)."""
        return replace(self, excluded=self.excluded | frozenset(toolsets))

    def narrowed(self, toolsets: Iterable[str]) -> ToolRegistry:
        """Only the tools of ``toolsets`` that this view shows already: unlike
        ``restricted``, never wider than this view, whatever it was restricted to."""
        wanted = expand_toolsets(sorted(set(toolsets)), self._toolsets)
        return replace(self, only=frozenset(wanted & self.active_toolsets()))

    def blocking(self, reasons: Mapping[str, str]) -> ToolRegistry:
        """The same tools without those named in ``reasons``; a call to one of them is
        answered with its reason instead of running."""
        return replace(self, blocked={**self.blocked, **reasons})

    def unknown_toolsets(self) -> list[str]:
        """Enabled names that no toolset declaration or tool provides (for diagnostics)."""
        known = set(self._toolsets) | {spec.toolset for spec in self._specs.values()}
        return sorted(self.active_toolsets() - known)

    def visible(self) -> list[ToolSpec]:
        """Tools the model may see, in registration order."""
        active = self.active_toolsets()
        return [spec for spec in self._specs.values() if self._available(spec, active)]

    def names(self) -> list[str]:
        return [spec.name for spec in self.visible()]

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style function tool schemas of the visible tools."""
        return [spec.schema() for spec in self.visible()]

    def get(self, name: str) -> ToolSpec | None:
        """The visible tool called ``name``, or None."""
        spec = self._specs.get(name)
        return spec if spec and self._available(spec, self.active_toolsets()) else None

    def is_parallel_safe(self, name: str) -> bool:
        spec = self.get(name)
        return bool(spec and spec.parallel_safe)

    def _available(self, spec: ToolSpec, active: set[str]) -> bool:
        if spec.toolset not in active or spec.name in self.disabled_tools \
                or spec.name in self.blocked:
            return False
        if any(not self.environ.get(name) for name in spec.requires_env):
            return False
        try:
            return bool(spec.check())
        except Exception:  # a broken check hides its tool rather than breaking the turn
            return False

    def dispatch(self, name: str, raw_arguments: str | Mapping[str, Any] | None,
                 ctx: ToolContext) -> ToolResult:
        """Run one tool call; never raises (except ``BaseException`` such as Ctrl-C)."""
        started = time.monotonic()
        args: dict[str, Any] | None = None
        spec: ToolSpec | None = None
        try:
            spec = self._require(name)
            args = validate_arguments(spec.parameters, parse_arguments(raw_arguments))
            output = run_handler(spec, args, ctx)
        except ToolError as exc:
            output = ToolOutput(error(str(exc)))
        except Exception as exc:  # e.g. a broken toolset declaration
            output = ToolOutput(error(f"{name}: {type(exc).__name__}: {exc}"))
        limit = (spec.max_result_chars if spec else None) or ctx.max_result_chars
        result = finish(name, args, output.content, ctx, limit, started)
        return replace(result, images=output.images) if output.images else result

    def _require(self, name: str) -> ToolSpec:
        spec = self.get(name)
        if spec is not None:
            return spec
        if name in self.blocked:
            raise ToolError(f"{name}: {self.blocked[name]}")
        names = self.names()
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ToolError(f'unknown tool "{name}"{hint} available tools: {", ".join(names)}')


def run_handler(spec: ToolSpec, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Call the handler; whatever it raises becomes an error result."""
    try:
        content = spec.handler(args, ctx=ctx)
    except ToolError as exc:
        return ToolOutput(error(str(exc)))
    except Exception as exc:
        return ToolOutput(error(f"{spec.name} failed: {type(exc).__name__}: {exc}"))
    if isinstance(content, ToolOutput):
        return content
    if not isinstance(content, str):
        return ToolOutput(error(f"{spec.name} returned {type(content).__name__} instead of a "
                                "JSON string"))
    return ToolOutput(content)


def finish(name: str, args: dict[str, Any] | None, content: str, ctx: ToolContext, limit: int,
           started: float) -> ToolResult:
    """Redact, then cap (spilling the redacted whole), then package the result."""
    content = ctx.redact(content)
    try:
        capped = cap_result(content, limit, ctx.spill_dir, name)
    except OSError as exc:  # an unwritable spill dir must not lose the whole result
        capped = cap_result(content, limit, None, name)
        content = capped.content + f"\n(spill failed: {exc})"
    else:
        content = capped.content
    return ToolResult(name=name, content=content, is_error=is_error(content), arguments=args,
                      spill_path=capped.spill_path, duration_s=time.monotonic() - started)


def build_tool_registry(
    enabled: Iterable[str], disabled_tools: Iterable[str] = (), *,
    environ: Mapping[str, str] | None = None, specs: Iterable[ToolSpec] = (),
    toolsets: Iterable[ToolsetSpec] = (), ripgrep: str | None = "auto",
    contributed: Iterable[tuple[ToolsetSpec, list[ToolSpec]]] = (),
) -> ToolRegistry:
    """The registry of one runtime: the core tools plus ``specs``, filtered by config, and
    the ``contributed`` toolsets (plugins'), active as they are (``add_toolset``).

    ``ripgrep`` is the path of ``rg`` for ``search_files``; ``"auto"`` looks it
    up on PATH, None forces the pure-Python search. Raises ``ToolsetError`` for
    a cycle of toolset includes.
    """
    registry = ToolRegistry(frozenset(enabled), frozenset(disabled_tools),
                            environ=dict(os.environ if environ is None else environ))
    for toolset in [*CORE_TOOLSETS, *toolsets]:
        registry.register_toolset(toolset)
    # Offer ``terminal(background=true)`` only when the ``process`` tool can manage the job.
    background = ("process" in registry.active_toolsets()
                  and "process" not in registry.disabled_tools)
    registry.register_all([*core_tools(ripgrep=ripgrep, background=background), *specs])
    for toolset, tools in contributed:
        registry.add_toolset(toolset, tools)
    return registry
