"""Imports run one way (ARCHITECTURE.md): front doors -> container -> services ->
foundation (config, home, sessions, errors). This walks every import under
``runtime/hermes`` with ``ast`` (those inside functions and under ``TYPE_CHECKING``
too) and fails on an import of a higher layer or on a cycle between packages.

``LAYERS`` is the one table: a new package or root module must be placed in it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes.pysource import parse_python

PACKAGE = Path(__file__).resolve().parent.parent / "runtime" / "hermes"

FOUNDATION, SERVICES, CONTAINER, FRONT_DOORS = 0, 1, 2, 3
LAYER_NAMES = {FOUNDATION: "foundation", SERVICES: "services", CONTAINER: "container",
               FRONT_DOORS: "front doors"}

LAYERS: dict[str, int] = {
    # the package's own __init__ (``__version__``); matches only itself
    "hermes": FOUNDATION,
    "hermes.errors": FOUNDATION,
    "hermes.fsutil": FOUNDATION,
    "hermes.pysource": FOUNDATION,
    "hermes.home": FOUNDATION,
    "hermes.credentials": FOUNDATION,
    "hermes.redact": FOUNDATION,
    "hermes.logs": FOUNDATION,
    "hermes.python_child": FOUNDATION,
    "hermes.cli_names": FOUNDATION,
    "hermes.argv": FOUNDATION,
    "hermes.http_names": FOUNDATION,
    "hermes.unix_socket": FOUNDATION,
    "hermes.hints": FOUNDATION,
    "hermes.chats": FOUNDATION,
    "hermes.identities": FOUNDATION,
    "hermes.codes": FOUNDATION,
    "hermes.importing": FOUNDATION,
    "hermes.models.types": FOUNDATION,
    "hermes.events": FOUNDATION,
    "hermes.config": FOUNDATION,
    "hermes.sessions": FOUNDATION,
    "hermes.daemon.wire": FOUNDATION,
    "hermes.agent": SERVICES,
    "hermes.tools": SERVICES,
    "hermes.environments": SERVICES,
    "hermes.memory": SERVICES,
    "hermes.skills": SERVICES,
    "hermes.learning": SERVICES,
    "hermes.delegation": SERVICES,
    "hermes.cron": SERVICES,
    "hermes.messaging": SERVICES,
    "hermes.plugins": SERVICES,
    "hermes.mcp": SERVICES,
    "hermes.web": SERVICES,
    "hermes.vision": SERVICES,
    "hermes.voice": SERVICES,
    "hermes.browser": SERVICES,
    "hermes.models": SERVICES,
    "hermes.doctor": SERVICES,
    "hermes.profiles": SERVICES,
    "hermes.container": CONTAINER,
    "hermes.experiments": FRONT_DOORS,
    "hermes.cli": FRONT_DOORS,
    "hermes.gateway": FRONT_DOORS,
    "hermes.dashboard": FRONT_DOORS,
    "hermes.acp": FRONT_DOORS,
    # the dashboard's data layer (plain queries over the session store)
    "hermes.dashboard.queries": FRONT_DOORS,
    "hermes.mcp.serve": FRONT_DOORS,
    "hermes.mcp.serve_run": FRONT_DOORS,
    "hermes.mcp.profile_access": FRONT_DOORS,
    "hermes.daemon": FRONT_DOORS,
    "hermes.entry": FRONT_DOORS,
    "hermes.__main__": FRONT_DOORS,
}


@dataclass(frozen=True)
class Edge:
    """One import: where it is written, the importing and the imported module."""

    where: str
    source: str
    target: str


def module_name(file: Path, root: Path) -> str:
    parts = list(file.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_of(root: Path) -> dict[str, Path]:
    return {module_name(file, root): file for file in sorted(root.rglob("*.py"))
            if "__pycache__" not in file.parts}


def _imported(node: ast.AST, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The modules ``node`` imports (``from a import b`` is ``a.b`` when that is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
        base = ".".join(anchor + ([base] if base else []))
    names = [f"{base}.{alias.name}" for alias in node.names]
    return [name for name in names if name in known] or [base]


def imports_of(root: Path) -> list[Edge]:
    """Every import of one of ``root``'s own modules, by every module under ``root``."""
    modules = modules_of(root)
    known, prefix = set(modules), root.name
    edges = []
    for module, file in modules.items():
        tree = parse_python(file.read_text(encoding="utf-8"), str(file))
        for node in ast.walk(tree):
            for target in _imported(node, module, file.name == "__init__.py", known):
                if target == prefix or target.startswith(prefix + "."):
                    where = f"{file.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
                    edges.append(Edge(where, module, target))
    return edges


def unit_of(module: str, table: dict[str, int]) -> str | None:
    """The table's entry for ``module``: the longest key that is it or a package of it."""
    parts = module.split(".")
    for size in range(len(parts), 0, -1):
        key = ".".join(parts[:size])
        if key in table and (size > 1 or module == key):
            return key
    return None


def upward(edges: list[Edge], table: dict[str, int]) -> list[str]:
    """Imports of a higher layer, and modules the table does not place."""
    problems = []
    for edge in edges:
        units = unit_of(edge.source, table), unit_of(edge.target, table)
        if units[0] is None or units[1] is None:
            missing = edge.source if units[0] is None else edge.target
            problems.append(f"{edge.where}: {missing} is in no layer of LAYERS")
        elif table[units[1]] > table[units[0]]:
            problems.append(
                f"{edge.where}: {edge.source} ({LAYER_NAMES[table[units[0]]]}) imports "
                f"{edge.target} ({LAYER_NAMES[table[units[1]]]})")
    return sorted(set(problems))


def cycles(edges: list[Edge], table: dict[str, int]) -> list[str]:
    """Each group of packages that import each other (a strongly connected component of
    the package graph), with the imports that close it."""
    graph: dict[str, dict[str, Edge]] = {}
    for edge in edges:
        source, target = (unit_of(name, table) for name in (edge.source, edge.target))
        if source and target and source != target:
            graph.setdefault(source, {}).setdefault(target, edge)
    found = []
    for group in _strongly_connected(graph):
        inside = sorted(f"    {source} -> {target}  ({edge.where})"
                        for source in group for target, edge in graph.get(source, {}).items()
                        if target in group)
        found.append(f"cycle between {', '.join(sorted(group))}:\n" + "\n".join(inside))
    return sorted(found)


def _strongly_connected(graph: dict[str, dict[str, Edge]]) -> list[set[str]]:
    """Components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, {})))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return groups


def problems_of(root: Path, table: dict[str, int]) -> list[str]:
    edges = imports_of(root)
    return upward(edges, table) + cycles(edges, table)


def test_imports_run_one_way() -> None:
    problems = problems_of(PACKAGE, LAYERS)
    assert not problems, f"{len(problems)} import problems:\n" + "\n".join(problems)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "hermes"


@pytest.mark.parametrize("planted, expected", [
    ({"hermes/config/schema.py": "def check():\n    from hermes.tools import catalog\n"},
     ["hermes/config/schema.py:2: hermes.config.schema (foundation) imports "
      "hermes.tools.catalog (services)",
      "cycle between hermes.config, hermes.tools:\n"
      "    hermes.config -> hermes.tools  (hermes/config/schema.py:2)\n"
      "    hermes.tools -> hermes.config  (hermes/tools/catalog.py:1)"]),
    ({"hermes/agent/factory.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                 "    from hermes.cli.main import COMMANDS\n"},
     ["hermes/agent/factory.py:3: hermes.agent.factory (services) imports "
      "hermes.cli.main (front doors)",
      "cycle between hermes.agent, hermes.cli, hermes.container:\n"
      "    hermes.agent -> hermes.cli  (hermes/agent/factory.py:3)\n"
      "    hermes.cli -> hermes.container  (hermes/cli/main.py:1)\n"
      "    hermes.container -> hermes.agent  (hermes/container.py:1)"]),
    ({"hermes/agent/factory.py": "from hermes.delegation import run\n",
      "hermes/delegation/run.py": "from ..agent import factory\n"},
     ["cycle between hermes.agent, hermes.delegation:\n"
      "    hermes.agent -> hermes.delegation  (hermes/agent/factory.py:1)\n"
      "    hermes.delegation -> hermes.agent  (hermes/delegation/run.py:1)"]),
    ({"hermes/mcp/broker.py": "from hermes.daemon import wire, server\n"},
     ["hermes/mcp/broker.py:1: hermes.mcp.broker (services) imports "
      "hermes.daemon.server (front doors)"]),
    ({"hermes/kiosk/app.py": "import hermes.container\n"},
     ["hermes/kiosk/app.py:1: hermes.kiosk.app is in no layer of LAYERS"]),
])
def test_the_checker_finds_what_is_planted(tmp_path: Path, planted: dict[str, str],
                                           expected: list[str]) -> None:
    base = {"hermes/__init__.py": "", "hermes/config/__init__.py": "",
            "hermes/tools/catalog.py": "from hermes.config import schema\n",
            "hermes/daemon/wire.py": "", "hermes/daemon/server.py": "",
            "hermes/cli/main.py": "from hermes.container import build\n",
            "hermes/container.py": "from hermes.agent import factory\n",
            "hermes/delegation/__init__.py": "", "hermes/agent/__init__.py": ""}
    root = _write(tmp_path, base)
    assert problems_of(root, LAYERS) == []
    assert problems_of(_write(tmp_path, planted), LAYERS) == expected
