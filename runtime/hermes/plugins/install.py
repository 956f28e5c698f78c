"""``hermes plugins install | remove``: put a plugin in the home, or take it out.

A source is a directory holding ``plugin.yaml``, a git URL (``https://``,
``ssh://``, ``git@host:``, ``file://``, or ending in ``.git``; ``#subdir`` picks a
directory of the repository), or a Python package (``pip:SPEC``, or a bare name
that is neither) installed into the environment Hermes runs in, where its
``hermes_agent.plugins`` entry point makes it a plugin. Directory and git plugins are
scanned as skills are (``skills/guard.py``: injected text, dangerous shell, Python that
sends credentials or the whole environment away, links leading out; the caller decides
on findings); the Python packages its manifest's ``pip_dependencies`` name are installed
into the environment Hermes runs in (pip resolves and fetches them all before it
installs any: when that fails, nothing is installed and the plugin is not copied); then
it is copied whole into ``$HERMES_HOME/plugins/<name>/`` (links leading out of it are not
copied). A package is not scanned: pip builds and installs it. ``plugins/
.lock.json`` (0600) records where each came from: the source, and for git the commit; a
lock that cannot be read is refused, never rewritten.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.errors import ManifestError, PluginError
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home
from hermes.plugins.discovery import ENTRY_POINT_GROUP
from hermes.plugins.manifest import PluginManifest, manifest_file, read_manifest
from hermes.python_child import python_argv

if TYPE_CHECKING:
    from hermes.skills.guard import Finding

Review = Callable[[str, "list[Finding]"], None]
"""Shown a plugin's name and what the scan found before it is copied; raises to refuse."""

LOCK_FILE = ".lock.json"
PIP_TIMEOUT = 600


def read_lock(home: Home) -> dict[str, dict[str, Any]]:
    """Install records by plugin name (none without a lock); a lock that cannot be read is
    refused naming it (``UserError``), so nothing writes over it."""
    from hermes.skills.lockfile import read_lock_records

    return read_lock_records(home.plugins_dir / LOCK_FILE, "plugins")


def _write_lock(home: Home, entries: dict[str, dict[str, Any]]) -> None:
    private_dir(home.plugins_dir)
    atomic_write(home.plugins_dir / LOCK_FILE,
                 json.dumps({"format": 1, "plugins": dict(sorted(entries.items()))},
                            indent=2) + "\n", mode=0o600)


def is_pip(source: str) -> bool:
    """A Python package rather than a directory or a git URL."""
    from hermes.skills.install import GIT_PREFIXES

    if source.startswith("pip:"):
        return True
    return not (source.startswith(GIT_PREFIXES) or source.endswith(".git") or "#" in source
                or "/" in source or Path(source).expanduser().exists())


def refuse_findings(name: str, findings: list[Finding]) -> None:
    """The ``review`` of callers nobody is asked in: any finding refuses."""
    if findings:
        raise PluginError(f"the scan found problems in {name}: {findings[0]}; nothing "
                          "installed")


def install(home: Home, source: str, *, force: bool = False,
            review: Review = refuse_findings) -> tuple[str, dict[str, Any]]:
    """Install from ``source``; the plugin's name and its lock record. A directory or git
    plugin is scanned like a skill (``skills/guard.py``) and ``review`` sees the findings
    before anything is copied (it raises to refuse)."""
    read_lock(home)  # an unreadable lock is refused before anything changes
    if is_pip(source):
        return install_package(home, source.removeprefix("pip:"))
    from hermes.skills.guard import scan_tree
    from hermes.skills.install import Source, fetch

    with fetch(Source.parse(source)) as fetched:
        manifest = check_plugin_dir(fetched.root, source)
        target = home.plugins_dir / manifest.name
        if target.exists() and not force:
            raise PluginError(f"plugin {manifest.name} is already installed in {target}; "
                              "nothing installed — pass --force to replace it")
        review(manifest.name, scan_tree(fetched.root, unit="plugin", skip=_not_copied))
        install_dependencies(manifest)
        _copy(fetched.root, target)
        record = {"source": fetched.source.text, "kind": "git" if fetched.commit else "path",
                  "commit": fetched.commit, "version": manifest.version,
                  "installed": round(time.time())}
    _record(home, manifest.name, record)
    return manifest.name, record


def install_dependencies(manifest: PluginManifest) -> None:
    """``pip install`` the manifest's ``pip_dependencies`` into Hermes' environment;
    ``PluginError`` naming them when pip cannot (offline, no pip, a bad name)."""
    wanted = manifest.pip_dependencies
    if not wanted:
        return
    try:
        _pip("install", *wanted)
    except PluginError as exc:
        raise PluginError(f"plugin {manifest.name} needs {', '.join(wanted)} "
                          f"(pip_dependencies), which could not be installed into "
                          f"{sys.prefix}: {exc}; nothing installed — check the network, or "
                          "install them there yourself and retry") from None


def check_plugin_dir(directory: Path, source: str) -> PluginManifest:
    """The manifest of a plugin directory about to be installed; ``PluginError`` if it is
    not one."""
    file = manifest_file(directory)
    if file is None:
        raise PluginError(f"{source}: no plugin.yaml there; a plugin directory holds "
                          "plugin.yaml and __init__.py with register(ctx)")
    try:
        manifest = read_manifest(file, default_name=directory.name)
    except ManifestError as exc:
        raise PluginError(str(exc)) from None
    if not (directory / "__init__.py").is_file():
        raise PluginError(f"{source}: no __init__.py with register(ctx) beside plugin.yaml")
    return manifest


def _not_copied(rel: str) -> bool:
    return any(part in (".git", "__pycache__") for part in rel.split("/"))


def _copy(source: Path, target: Path) -> None:
    """Copy the plugin whole (no VCS data, no link leading out of it) beside ``target``,
    then swap it in."""
    from hermes.skills.links import copy_tree

    private_dir(target.parent)
    staging = target.with_name(f".installing-{target.name}-{time.monotonic_ns()}")
    copy_tree(source, staging, skip=_not_copied)
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)


def _record(home: Home, name: str, record: dict[str, Any]) -> None:
    entries = read_lock(home)
    entries[name] = record
    _write_lock(home, entries)


def install_package(home: Home, spec: str) -> tuple[str, dict[str, Any]]:
    """``pip install`` ``spec`` into Hermes' own environment; the plugin its entry point
    declares."""
    before = _entry_points()
    _pip("install", spec)
    added = {name: dist for name, dist in _entry_points().items() if before.get(name) != dist}
    if not added:
        raise PluginError(f"installed {spec}, but it declares no {ENTRY_POINT_GROUP} entry "
                          "point, so it is no Hermes plugin (`uv pip uninstall` it)")
    name, dist = sorted(added.items())[0]
    record = {"source": f"pip:{spec}", "kind": "pip", "distribution": dist[0],
              "version": dist[1], "installed": round(time.time())}
    _record(home, name, record)
    return name, record


def _entry_points() -> dict[str, tuple[str, str]]:
    """Plugin entry points of this environment: name -> (distribution, version)."""
    import importlib
    import importlib.metadata

    importlib.invalidate_caches()  # a package pip just installed
    return {point.name: (point.dist.name, point.dist.version) if point.dist else ("?", "?")
            for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _pip(*args: str) -> None:
    """``uv pip`` (else ``python -P -m pip``: a ``pip.py`` in this directory is not run)
    for the interpreter running Hermes."""
    uv = shutil.which("uv")
    command = [uv, "pip", *args, "--python", sys.executable] if uv else python_argv("pip", *args)
    if not uv and args[0] == "uninstall":
        command.append("--yes")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise PluginError(f"pip {args[0]} took over {PIP_TIMEOUT} s") from None
    except OSError as exc:  # no uv, no python: nothing could run pip
        raise PluginError(f"pip cannot run: {exc}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise PluginError(f"pip {' '.join(args)} failed: {lines[-1] if lines else done.returncode}")


def removable(home: Home, name: str, found: Any) -> str:
    """What ``remove`` would remove (the directory, or the package); ``PluginError`` when
    the profile has no such plugin to remove."""
    record = read_lock(home).get(found.manifest.name if found else name)
    if found is not None and found.source == "home":
        hand = "" if record is not None else ", written by hand: not installed by Hermes"
        return f"the directory {found.path}{hand}"
    if record is not None and record.get("kind") == "pip":
        return f"the package {record['distribution']}"
    if found is None:
        raise PluginError(f'no plugin "{name}" is installed in this profile')
    raise PluginError(f"plugin {found.key} is not installed in this profile but comes from "
                      f"{found.source} ({found.where}); `hermes plugins disable "
                      f"{found.key}` keeps it from loading")


def remove(home: Home, name: str, found: Any) -> str:
    """Remove an installed plugin (its directory, or its package); what was removed."""
    removed = removable(home, name, found)
    if found is not None and found.source == "home":
        shutil.rmtree(found.path)
    else:
        _pip("uninstall", str(read_lock(home)[found.manifest.name if found else name]
                              ["distribution"]))
    entries = read_lock(home)
    entries.pop(found.manifest.name if found else name, None)
    _write_lock(home, entries)
    return removed
