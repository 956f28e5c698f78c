"""The tool registry: one per runtime, never module-global.

A tool is a declared ``ToolSpec``; the registry holds the specs registered for
one runtime and shows the model only those whose toolset is enabled, which
are not disabled by name, and whose availability check passes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[..., str]


@dataclass(frozen=True)
class ToolSpec:
    """Everything the runtime needs to know about one tool."""

    name: str
    toolset: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments."""
    handler: Handler
    """``handler(args, **ctx) -> str`` (a JSON string, always)."""
    check: Callable[[], bool] = lambda: True
    """Availability check; a tool whose check fails is never shown to the model."""
    requires_env: tuple[str, ...] = ()
    parallel_safe: bool = False
    max_result_chars: int | None = None


@dataclass
class ToolRegistry:
    """The tools of one runtime, filtered by its toolsets config."""

    enabled_toolsets: frozenset[str]
    disabled_tools: frozenset[str] = frozenset()
    _specs: dict[str, ToolSpec] = field(default_factory=dict)

    def register(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"tool {spec.name!r} is already registered")
        self._specs[spec.name] = spec

    def register_all(self, specs: Iterable[ToolSpec]) -> None:
        for spec in specs:
            self.register(spec)

    def visible(self) -> list[ToolSpec]:
        """Tools the model may see, in registration order."""
        return [
            spec for spec in self._specs.values()
            if spec.toolset in self.enabled_toolsets
            and spec.name not in self.disabled_tools
            and spec.check()
        ]

    def get(self, name: str) -> ToolSpec | None:
        spec = self._specs.get(name)
        return spec if spec in self.visible() else None


def build_tool_registry(enabled: list[str], disabled_tools: list[str]) -> ToolRegistry:
    return ToolRegistry(frozenset(enabled), frozenset(disabled_tools))
