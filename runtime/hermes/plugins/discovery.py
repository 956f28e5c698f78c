"""Where a home's plugins are found, read from their manifests without importing them.

Sources, searched in this order; the first plugin of a name wins and the others are
reported as shadowed — except that a plugin never replaces an enabled plugin of another
source without the user's consent naming its source (``plugins.allow_shadow:
[project:tool-log]``, which ``hermes plugins enable tool-log --source project`` writes):
without it, it is skipped with a warning naming both (``refused``) and the later one
loads, so a cloned repository's ``.hermes/plugins/tool-log`` cannot take the bundled
one's place:

1. ``home`` — ``$HERMES_HOME/plugins/<name>/`` or ``<category>/<name>/`` (one level
   of category, no deeper);
2. ``directory`` — each of ``plugins.directories`` (system layers, e.g. the NixOS
   module's ``extraPlugins``), shaped like the home's;
3. ``project`` — ``.hermes/plugins/`` of the working directory, only with
   ``plugins.project: true``;
4. ``entrypoint`` — installed Python packages declaring an entry point in the group
   ``hermes_agent.plugins`` (``pip install``, ``hermes plugins install PIP-NAME``);
5. ``bundled`` — the plugins shipped in this package.

A plugin directory holds ``plugin.yaml`` and ``__init__.py`` with ``register(ctx)``.
Within a source plugins come in name order, which is also the order their hooks run.
``debug`` (``HERMES_PLUGINS_DEBUG=1``) hears every directory scanned, every manifest
found and why anything was passed over.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes.errors import ManifestError
from hermes.plugins.manifest import PluginManifest, manifest_file, manifest_from, read_manifest

ENTRY_POINT_GROUP = "hermes_agent.plugins"
BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
SourceKind = Literal["home", "directory", "project", "entrypoint", "bundled"]
Debug = Callable[[str], None]


@dataclass(frozen=True)
class Found:
    """One discovered plugin."""

    key: str
    """What ``plugins.enabled`` names it by: its name, or ``category/<directory>``."""
    manifest: PluginManifest
    source: SourceKind
    path: Path | None
    """Its directory; for an entry point, its package's directory when known."""
    entry_point: str | None = None
    """``module[:attribute]`` of an entry-point plugin."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name config may use for it (the key, the manifest's name)."""
        return tuple(dict.fromkeys((self.key, self.manifest.name)))

    @property
    def where(self) -> str:
        return str(self.path) if self.path else f"entry point {self.entry_point}"


MayShadow = Callable[[Found, Found], bool]
"""Whether a plugin may replace a later one of its key (``PluginSettings.may_shadow``)."""


@dataclass
class Discovery:
    found: list[Found] = field(default_factory=list)
    """The plugins in effect, one per key, in discovery order."""
    shadowed: list[tuple[Found, Found]] = field(default_factory=list)
    """``(plugin, the one that wins over it)``."""
    refused: list[tuple[Found, Found]] = field(default_factory=list)
    """``(plugin, the enabled one it may not replace)``: it came first, but nobody
    consented to it shadowing a plugin of another source (``plugins.allow_shadow``)."""
    problems: list[str] = field(default_factory=list)
    """Broken manifests, one line each (file, key, fix)."""

    def get(self, name: str) -> Found | None:
        """The plugin ``name`` refers to (a key, or a name no other plugin shares)."""
        by_key = next((f for f in self.found if f.key == name), None)
        if by_key is not None:
            return by_key
        named = [f for f in self.found if f.manifest.name == name]
        return named[0] if len(named) == 1 else None


@dataclass(frozen=True)
class Sources:
    """The places one home's plugins come from (see the module docstring)."""

    home: Path
    directories: tuple[Path, ...] = ()
    project: Path | None = None
    entry_points: bool = True
    bundled: Path | None = BUNDLED_DIR

    def directory_sources(self) -> Iterator[tuple[SourceKind, Path]]:
        yield "home", self.home
        for directory in self.directories:
            yield "directory", directory
        if self.project is not None:
            yield "project", self.project


def discover(sources: Sources, debug: Debug | None = None,
             may_shadow: MayShadow | None = None) -> Discovery:
    """Every plugin of ``sources``: of one key, the first that ``may_shadow`` every later
    one wins (by default simply the first)."""
    say = debug or (lambda _line: None)
    found: list[Found] = []
    problems: list[str] = []
    for kind, root in sources.directory_sources():
        found += scan_directory(kind, root, problems, say)
    if sources.entry_points:
        found += scan_entry_points(problems, say)
    if sources.bundled is not None:
        found += scan_directory("bundled", sources.bundled, problems, say)
    discovery = Discovery(problems=problems)
    groups: dict[str, list[Found]] = {}
    for plugin in found:
        groups.setdefault(plugin.key, []).append(plugin)
    winners = {key: _winner(group, may_shadow or (lambda _p, _h: True), discovery, say)
               for key, group in groups.items()}
    discovery.found = [plugin for plugin in found if winners[plugin.key] is plugin]
    return discovery


def _winner(group: list[Found], may_shadow: MayShadow, discovery: Discovery,
            say: Debug) -> Found:
    """The plugin of one key that loads; the others go to ``shadowed`` or ``refused``."""
    chosen = next(plugin for index, plugin in enumerate(group)
                  if all(may_shadow(plugin, later) for later in group[index + 1:]))
    for plugin in group:
        if plugin is chosen:
            continue
        before = group.index(plugin) < group.index(chosen)
        (discovery.refused if before else discovery.shadowed).append((plugin, chosen))
        say(f"{plugin.key} ({plugin.source}, {plugin.where}): " + (
            f"may not replace the enabled {chosen.source} one (plugins.allow_shadow)"
            if before else f"shadowed by the {chosen.source} plugin of that name"))
    return chosen


def shadow_refusal(plugin: Found, kept: Found) -> str:
    """The warning for a plugin of ``Discovery.refused``: both sources and the consent."""
    return (f"plugin {plugin.key} from {plugin.source} ({plugin.where}) is not loaded: it "
            f"would replace the enabled {kept.source} plugin of that name ({kept.where}); "
            f"to load it instead, run `hermes plugins enable {plugin.key} --source "
            f"{plugin.source}` (plugins.allow_shadow: [{plugin.source}:{plugin.key}])")


def scan_directory(kind: SourceKind, root: Path, problems: list[str], say: Debug,
                   category: str | None = None) -> list[Found]:
    """The plugins under ``root``: ``<name>/plugin.yaml``, or one level of category."""
    if category is None:
        say(f"scanning {kind} plugins: {root}" + ("" if root.is_dir() else " (missing)"))
    found: list[Found] = []
    for child in _subdirectories(root):
        file = manifest_file(child)
        if file is not None:
            plugin = _read(kind, child, file, category, problems, say)
            found += [plugin] if plugin else []
        elif category is None:
            found += scan_directory(kind, child, problems, say, category=child.name)
        else:
            say(f"skipped {child}: no plugin.yaml (categories are one level deep)")
    if category is None:
        say(f"  {kind}: {len(found)} manifest(s) in {root}")
    return found


def _subdirectories(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def _read(kind: SourceKind, directory: Path, file: Path, category: str | None,
          problems: list[str], say: Debug) -> Found | None:
    try:
        manifest = read_manifest(file, default_name=directory.name)
    except ManifestError as exc:
        problems.append(str(exc))
        say(f"skipped {directory}: {exc}")
        return None
    key = f"{category}/{directory.name}" if category else manifest.name
    say(f"  found {key} {manifest.version or '(no version)'} kind={manifest.kind} "
        f"source={kind} path={directory}")
    return Found(key, manifest, kind, directory)


def scan_entry_points(problems: list[str], say: Debug) -> list[Found]:
    """Installed packages' plugins (entry points in ``hermes_agent.plugins``)."""
    if not declares_entry_points():
        say(f"scanning entry points ({ENTRY_POINT_GROUP}): none declared")
        return []
    import importlib.metadata

    points = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP),
                    key=lambda p: p.name)
    say(f"scanning entry points ({ENTRY_POINT_GROUP}): {len(points)} found")
    found = []
    for point in points:
        plugin = _entry_point_plugin(point, problems, say)
        if plugin is not None:
            found.append(plugin)
    return found


def declares_entry_points() -> bool:
    """Whether an installed distribution on ``sys.path`` declares the group: a read of
    each ``entry_points.txt``, much cheaper than importing ``importlib.metadata``, which
    is only needed when one does."""
    header = f"[{ENTRY_POINT_GROUP}]"
    for directory in dict.fromkeys(sys.path):
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")) and \
                    header in _text_of(os.path.join(directory or ".", name,
                                                    "entry_points.txt")):
                return True
    return False


def _text_of(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def _entry_point_plugin(point: Any, problems: list[str], say: Debug) -> Found | None:
    """A plugin from an entry point: its package's ``plugin.yaml`` when it ships one,
    else a manifest made of the distribution's metadata."""
    directory = _package_dir(point)
    file = manifest_file(directory) if directory is not None else None
    try:
        if file is not None:
            manifest = read_manifest(file, default_name=point.name)
        else:
            meta = point.dist.metadata if point.dist is not None else {}
            manifest = manifest_from({"version": point.dist.version if point.dist else "",
                                      "description": meta.get("Summary") or ""},
                                     f"entry point {point.value}", point.name)
    except ManifestError as exc:
        problems.append(str(exc))
        say(f"skipped entry point {point.name}: {exc}")
        return None
    say(f"  found {point.name} {manifest.version} source=entrypoint value={point.value}")
    return Found(point.name, manifest, "entrypoint", directory, point.value)


def _package_dir(point: Any) -> Path | None:
    """The directory of the entry point's package, found without importing it."""
    if point.dist is None:
        return None
    module = point.value.partition(":")[0].strip()
    try:
        candidate = Path(str(point.dist.locate_file(module.replace(".", "/"))))
    except (OSError, NotImplementedError):
        return None
    return candidate if candidate.is_dir() else None
