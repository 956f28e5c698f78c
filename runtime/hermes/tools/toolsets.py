"""Toolsets: named groups of tools that compose with ``includes``.

A tool names its toolset (``ToolSpec.toolset``); a ``ToolsetSpec`` declares a
toolset's description and the toolsets it includes. The ``toolsets`` config
group's ``enabled`` list names toolsets; ``expand_toolsets`` follows includes
to the full set, and refuses cycles with the cycle spelled out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hermes.config.tool_catalog import ToolsetSpec
from hermes.errors import ConfigError, did_you_mean, one_of


class ToolsetError(ConfigError):
    """A toolset declaration that cannot be resolved (a cycle, an unknown include)."""


def expand_toolsets(enabled: Iterable[str], declared: Mapping[str, ToolsetSpec]) -> set[str]:
    """``enabled`` plus everything it includes, transitively.

    Names nobody declared are kept as they are (a toolset's tools may come from
    a plugin that is not loaded); an ``includes`` naming an undeclared toolset
    or a cycle of includes raises ``ToolsetError``.
    """
    done: set[str] = set()
    for name in enabled:
        _visit(name, declared, [], done)
    return done


def _visit(name: str, declared: Mapping[str, ToolsetSpec], path: list[str],
           done: set[str]) -> None:
    if name in path:
        cycle = " -> ".join([*path[path.index(name):], name])
        raise ToolsetError(f"toolsets include each other in a cycle: {cycle}; "
                           f"remove one of these includes", key="toolsets")
    if name in done:
        return
    spec = declared.get(name)
    for child in spec.includes if spec else ():
        if child not in declared:
            raise ToolsetError(f'toolset "{name}" includes unknown toolset "{child}"'
                               f"{did_you_mean(child, declared)}; known: {one_of(declared)}",
                               key="toolsets")
        _visit(child, declared, [*path, name], done)
    done.add(name)
