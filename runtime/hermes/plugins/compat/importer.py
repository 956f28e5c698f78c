"""``PluginImporter``: the ``__import__`` of one plugin's modules.

A plugin's modules get builtins of their own (``plugin_builtins``) whose ``__import__`` is
this object; every ``import`` statement in them, at load or in a later call, comes here:

- ``plugins.<name>.X`` / ``plugins.<category>.<name>.X`` (hermes-agent's path to the plugin
  itself) and relative imports load the plugin's own submodules, which get these builtins
  too (under the plugin's module name, ``hermes_plugins.<name>_<hash>.X``);
- another hermes-agent name (``names.HERMES_AGENT_TOP_LEVEL``) is answered from
  ``names.OFFERED`` with a module of its own per plugin, or refused naming it;
- everything else is Python's own import.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hermes.plugins.compat.names import (
    HERMES_AGENT_TOP_LEVEL,
    OFFERED,
    PACKAGES,
    UNSUPPORTED,
    unsupported,
)

_python_import = builtins.__import__


def plugin_builtins(package: str, directory: Path, names: Iterable[str],
                    home: Path | None) -> dict[str, Any]:
    """Builtins for the modules of the plugin imported as ``package`` from ``directory``
    (``names``: its manifest's names), whose ``get_hermes_home()`` is ``home``."""
    return PluginImporter(package, self_names(directory, names), home).builtins


def self_names(directory: Path, names: Iterable[str]) -> frozenset[str]:
    """What hermes-agent's tree may call the plugin in ``plugins.<...>.<name>``: its
    directory, its manifest's name, without ``-platform``, with ``_`` for ``-``."""
    found = {directory.name, *names}
    found |= {name.removesuffix("-platform") for name in found}
    return frozenset(found | {name.replace("-", "_") for name in found})


class PluginImporter:
    """See the module docstring; one per plugin package."""

    def __init__(self, package: str, names: frozenset[str], home: Path | None):
        self.package = package
        self.names = names
        self.home = home
        self.views: dict[str, types.ModuleType] = {}
        """The module given for each hermes-agent name asked for so far."""
        self.builtins: dict[str, Any] = {**builtins.__dict__, "__import__": self}
        self._lock = threading.RLock()

    def __call__(self, name: str, globals: dict[str, Any] | None = None,
                 locals: Any = None, fromlist: Sequence[str] | None = (),
                 level: int = 0) -> Any:
        if level:
            absolute = importlib.util.resolve_name("." * level + name, _package(globals))
            if self._is_own(absolute):
                return self._own(absolute, fromlist)
            return _python_import(name, globals, locals, fromlist, level)
        if name.partition(".")[0] not in HERMES_AGENT_TOP_LEVEL:
            return _python_import(name, globals, locals, fromlist, level)
        with self._lock:
            own = self._self_import(name)
            if own is not None:
                module = self._own(own, fromlist)
                return module if fromlist else self._alias_chain(name, own)
            return self._hermes_agent(name, fromlist)

    # -- the plugin's own modules -------------------------------------------------------

    def _is_own(self, name: str) -> bool:
        return name == self.package or name.startswith(self.package + ".")

    def _self_import(self, name: str) -> str | None:
        """The plugin's module that hermes-agent's ``plugins.[category.]<name>.X`` means."""
        parts = name.split(".")
        for at in (1, 2):
            if parts[0] == "plugins" and len(parts) > at and parts[at] in self.names:
                return ".".join([self.package, *parts[at + 1:]])
        return None

    def _own(self, absolute: str, fromlist: Sequence[str] | None) -> types.ModuleType:
        with self._lock:
            module = self._load_own(absolute)
            for item in fromlist or ():
                if item != "*" and hasattr(module, "__path__") and not hasattr(module, item):
                    self._load_child(absolute, item)
        return module

    def _load_child(self, parent: str, item: str) -> None:
        """Submodule ``item`` of ``parent`` if it is one (else ``from`` finds no name)."""
        try:
            self._load_own(f"{parent}.{item}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{parent}.{item}":
                raise

    def _load_own(self, fullname: str) -> types.ModuleType:
        if fullname in sys.modules:
            return sys.modules[fullname]
        parent_name, _, child = fullname.rpartition(".")
        parent = self._load_own(parent_name)
        spec = importlib.machinery.PathFinder.find_spec(fullname, getattr(parent, "__path__",
                                                                          None))
        if spec is None or spec.loader is None:
            shown = fullname.replace(self.package, "the plugin", 1)
            raise ModuleNotFoundError(f"No module named {shown!r}", name=fullname)
        module = importlib.util.module_from_spec(spec)
        module.__builtins__ = self.builtins  # type: ignore[attr-defined]
        sys.modules[fullname] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(fullname, None)
            raise
        setattr(parent, child, module)
        return module

    def _alias_chain(self, name: str, own: str) -> types.ModuleType:
        """``import plugins.<name>.X`` binds ``plugins``: shells leading to the plugin."""
        parts = name.split(".")
        depth = next(at for at in (1, 2) if parts[at] in self.names)
        holder = self._shell("plugins")
        for at in range(1, depth):
            setattr(holder, parts[at], holder := self._shell(".".join(parts[:at + 1])))
        setattr(holder, parts[depth], sys.modules[self.package])
        return self.views["plugins"]

    # -- hermes-agent's modules ---------------------------------------------------------

    def _hermes_agent(self, name: str, fromlist: Sequence[str] | None) -> types.ModuleType:
        module = self._view(name)
        for item in fromlist or ():
            child = f"{name}.{item}"
            if child in OFFERED or child in PACKAGES:
                self._view(child)
        return module if fromlist else self.views[name.partition(".")[0]]

    def _view(self, name: str) -> types.ModuleType:
        """The module this plugin is given for hermes-agent's ``name``."""
        if name in self.views:
            return self.views[name]
        if name in OFFERED:
            module = self._offered(name)
        elif name in PACKAGES:
            module = self._shell(name)
        else:
            raise ModuleNotFoundError(UNSUPPORTED.format(name=name), name=name)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(self._view(parent), child, module)
        return module

    def _offered(self, name: str) -> types.ModuleType:
        source = importlib.import_module(OFFERED[name])
        module = types.ModuleType(name, source.__doc__)
        module.__dict__.update({k: v for k, v in vars(source).items()
                                if k not in ("__name__", "__spec__", "__loader__", "bind")})
        bind = vars(source).get("bind")
        if bind is not None:
            module.__dict__.update(bind(self.home))
        self.views[name] = module
        return module

    def _shell(self, name: str) -> types.ModuleType:
        if name not in self.views:
            module = types.ModuleType(name, f"hermes-agent's {name} package (shell)")
            module.__path__ = []
            module.__getattr__ = unsupported(name)  # type: ignore[method-assign]
            self.views[name] = module
        return self.views[name]


def _package(globals: dict[str, Any] | None) -> str:
    """The package a relative import in a module with ``globals`` is relative to."""
    globals = globals or {}
    package = globals.get("__package__")
    if package is None and globals.get("__spec__") is not None:
        package = globals["__spec__"].parent
    if not package:
        raise ImportError("attempted relative import with no known parent package")
    return str(package)
