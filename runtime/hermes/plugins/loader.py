"""Importing a plugin and calling its ``register(ctx)``.

A directory plugin is imported as ``hermes_plugins.<name>_<hash of its path>``, so two
plugins of one name in two homes never replace each other's module; a module already
imported (the same plugin in a second runtime of the process) is reused and
``register`` is called again with that runtime's context. An entry-point plugin is
imported by its entry point.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path
from typing import Any

from hermes.plugins.compat import plugin_builtins
from hermes.plugins.discovery import Found

NAMESPACE = "hermes_plugins"


class PluginLoadError(Exception):
    """The plugin's module cannot be found or has no ``register``."""


def import_plugin(found: Found, home: Path | None = None) -> Any:
    """The plugin's module (or what its entry point names), imported once per process;
    hermes-agent's module names are offered to it (``compat``: ``home`` is its
    ``get_hermes_home()``)."""
    if found.entry_point is not None:
        return _entry_point_module(found.entry_point)
    if found.path is None or not (found.path / "__init__.py").is_file():
        raise PluginLoadError(f"no __init__.py in {found.path}: a plugin directory needs "
                              "plugin.yaml and __init__.py with register(ctx)")
    name = module_name(found)
    if name in sys.modules:
        return sys.modules[name]
    _namespace()
    spec = importlib.util.spec_from_file_location(
        name, found.path / "__init__.py", submodule_search_locations=[str(found.path)])
    if spec is None or spec.loader is None:
        raise PluginLoadError(f"cannot import {found.path}")
    module = importlib.util.module_from_spec(spec)
    module.__builtins__ = plugin_builtins(name, found.path, found.names, home)  # type: ignore[attr-defined]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # a fixed plugin is imported afresh next time
        raise
    return module


def register_function(loaded: Any) -> Any:
    """``register`` of a plugin's module; an entry point may name the function itself."""
    if not isinstance(loaded, types.ModuleType) and callable(loaded):
        return loaded
    register = getattr(loaded, "register", None)
    if not callable(register):
        raise PluginLoadError(f"{getattr(loaded, '__name__', loaded)} has no register(ctx) "
                              "function")
    return register


def module_name(found: Found) -> str:
    slug = re.sub(r"\W", "_", found.key)
    digest = hashlib.sha256(str(found.path).encode()).hexdigest()[:10]
    return f"{NAMESPACE}.{slug}_{digest}"


def _namespace() -> None:
    if NAMESPACE not in sys.modules:
        package = types.ModuleType(NAMESPACE)
        package.__path__ = []
        sys.modules[NAMESPACE] = package


def _entry_point_module(value: str) -> Any:
    module, _, attribute = value.partition(":")
    loaded: Any = importlib.import_module(module.strip())
    for part in filter(None, attribute.strip().split(".")):
        loaded = getattr(loaded, part)
    return loaded
