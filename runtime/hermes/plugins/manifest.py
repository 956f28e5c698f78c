"""``plugin.yaml``: what a plugin says about itself, read and checked before any import.

The format is hermes-agent's, so its plugins' manifests read as they are::

    name: calculator
    version: 1.0.0
    description: Math calculator — evaluate expressions and convert units
    author: Your Name
    kind: standalone            # standalone | backend | exclusive | platform | model-provider
    provides_tools: [calculate, unit_convert]
    provides_hooks: [post_tool_call]
    requires_env:
      - SOME_API_KEY            # the simple form
      - name: OTHER_KEY         # the rich form: shown when `hermes plugins enable` asks
        prompt: Other service key   # the question asked (else the name)
        description: Key for the Other service
        url: https://other.example/keys
        secret: true
    pip_dependencies: [other-sdk>=2]    # installed by `hermes plugins install`

hermes-agent's other keys are read and recorded (``provides_web_providers``,
``provides_browser_providers``, ``hooks``, ``platforms``, ``external_dependencies``);
a key nobody knows is ignored as hermes-agent ignores it (a debug line; a warning when
it looks like a misspelt known key), as is a hook name that is no event here (a
warning: the plugin still loads). A bad value of a known key is one line naming the
file, the key and the fix (``ManifestError``).
Checked by hand rather than by a pydantic model: ``hermes plugins list`` reads every
manifest and must not pay pydantic's import (about a third of a second).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hermes.errors import ConfigError, ManifestError, did_you_mean, one_of
from hermes.events import EVENTS

MANIFEST_FILES = ("plugin.yaml", "plugin.yml")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KINDS = ("standalone", "backend", "exclusive", "platform", "model-provider")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EnvVar:
    """One environment variable a plugin needs (``requires_env``) or can use
    (``optional_env``); the simple form is the bare name."""

    name: str
    description: str = ""
    """Shown when ``hermes plugins enable`` asks for it."""
    url: str = ""
    """Where to get a value."""
    prompt: str = ""
    """The question ``hermes plugins enable`` asks for it (else its name)."""
    secret: bool = False
    """Typed without echo; ``password`` is accepted as its older spelling."""
    password: bool = False


@dataclass(frozen=True)
class PluginManifest:
    """A plugin's ``plugin.yaml``."""

    name: str
    """Defaults to the plugin's directory name."""
    version: str = ""
    description: str = ""
    author: str = ""
    kind: str = "standalone"
    """What it provides (``KINDS``), for listings; every kind registers through
    ``register(ctx)``."""
    label: str = ""
    provides_tools: tuple[str, ...] = ()
    provides_hooks: tuple[str, ...] = ()
    requires_env: tuple[EnvVar, ...] = ()
    """Variables that must be set (in the environment or the profile's ``.env``) for
    the plugin to load."""
    optional_env: tuple[EnvVar, ...] = ()
    manifest_version: int = 1
    pip_dependencies: tuple[str, ...] = ()
    """Requirements ``hermes plugins install`` installs into Hermes' environment first."""
    hooks: tuple[str, ...] = ()
    """hermes-agent's spelling of ``provides_hooks``."""
    provides_web_providers: tuple[str, ...] = ()
    provides_browser_providers: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    """Operating systems it is made for (``linux``, ``macos``, ``windows``); recorded."""
    external_dependencies: tuple[str, ...] = ()
    """Programs it runs (the names of hermes-agent's ``{name, install, check}``); recorded."""
    ignored: tuple[str, ...] = ()
    """Keys of the file this Hermes does not know (ignored)."""
    notes: tuple[str, ...] = ()
    """Warnings about the manifest that do not keep the plugin from loading."""

    def missing_env(self, lookup: Callable[[str], Any]) -> list[str]:
        """Names of ``requires_env`` that ``lookup(name)`` finds no value for."""
        return [var.name for var in self.requires_env if not lookup(var.name)]


def manifest_file(directory: Path) -> Path | None:
    """The manifest of a plugin directory, or None."""
    for name in MANIFEST_FILES:
        if (directory / name).is_file():
            return directory / name
    return None


def read_manifest(file: Path, *, default_name: str) -> PluginManifest:
    """Parse and check ``file``; ``ManifestError`` names the file, the key and the fix."""
    from hermes.config.layers import read_yaml

    try:
        data = read_yaml(file)
    except ConfigError as exc:
        raise ManifestError(str(exc)) from None
    return manifest_from(data, str(file), default_name)


def manifest_from(data: Any, source: str, default_name: str) -> PluginManifest:
    """A manifest from already-parsed YAML (``source`` names it in errors)."""
    if not isinstance(data, dict):
        raise ManifestError("expected a mapping of keys (name, version, ...)", source=source)
    values: dict[str, Any] = {"name": default_name}
    ignored: list[str] = []
    notes: list[str] = []
    for key, value in data.items():
        if key in _CHECKS:
            values[key] = _CHECKS[key](value, source, key)
        else:
            ignored.append(str(key))
            notes.extend(_ignored(str(key), list(_CHECKS), source))
    hooks = [*values.get("provides_hooks", ()), *values.get("hooks", ())]
    notes += [f"{source}: hook {name!r} is no event of this Hermes"
              f"{did_you_mean(name, EVENTS)}; its callbacks are not called"
              for name in dict.fromkeys(hooks) if name not in EVENTS]
    return PluginManifest(**values, ignored=tuple(ignored), notes=tuple(notes))


def _ignored(key: str, known: list[str], source: str) -> list[str]:
    """A note when an unknown ``key`` looks like a misspelt known one; a debug line else
    (hermes-agent's manifests carry keys for its own features)."""
    hint = did_you_mean(key, known)
    if hint:
        return [f"{source}: {key}: unknown key{hint}; ignored"]
    log.debug("%s: %s: unknown key, ignored (known: %s)", source, key, one_of(known))
    return []


def _text(value: Any, source: str, key: str) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # YAML reads `version: 1.0` as a number; the manifest means text
    if not isinstance(value, str):
        raise ManifestError("expected text", source=source, key=key)
    return value


def _name(value: Any, source: str, key: str) -> str:
    text = _text(value, source, key)
    if not NAME.fullmatch(text):
        raise ManifestError("a name is 1-64 letters, digits, '.', '_' or '-'", source=source,
                            key=key)
    return text


def _kind(value: Any, source: str, key: str) -> str:
    if value not in KINDS:
        raise ManifestError(f"{value!r} is not a kind{did_you_mean(str(value), KINDS)}; "
                            f"kinds: {one_of(KINDS)}", source=source, key=key)
    return str(value)


def _names(value: Any, source: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError("expected a list of names", source=source, key=key)
    return tuple(value)


_SPEC = r"(?:~=|==|!=|<=|>=|<|>|===)\s*[A-Za-z0-9.*+!_-]+"
REQUIREMENT = re.compile(rf"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
                         rf"(?:\[[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\])?"
                         rf"\s*(?:{_SPEC}(?:\s*,\s*{_SPEC})*)?")
"""A ``pip_dependencies`` entry: a package from the index, with extras and versions —
never a pip option (``--index-url=...``), a path or a URL, which would install what
the install's scan never saw."""


def _requirements(value: Any, source: str, key: str) -> tuple[str, ...]:
    names = _names(value, source, key)
    for name in names:
        if not REQUIREMENT.fullmatch(name.strip()):
            raise ManifestError(f"{name!r} is not a package requirement (NAME, NAME[extra], "
                                "NAME>=1,<2: no pip options, paths or URLs)",
                                source=source, key=key)
    return names


def _programs(value: Any, source: str, key: str) -> tuple[str, ...]:
    """``external_dependencies``: names, or mappings with a ``name`` (``install`` and
    ``check`` say how to get it; shown, never run)."""
    if not isinstance(value, list):
        raise ManifestError("expected a list of programs (NAME, or a mapping with name, "
                            "install, check)", source=source, key=key)
    names = [item.get("name") if isinstance(item, dict) else item for item in value]
    if not all(isinstance(name, str) and name for name in names):
        raise ManifestError("each entry needs a name", source=source, key=key)
    return tuple(str(name) for name in names)


def _variables(value: Any, source: str, key: str) -> tuple[EnvVar, ...]:
    if not isinstance(value, list):
        raise ManifestError("expected a list of variables (NAME, or a mapping with name, "
                            "description, url, secret)", source=source, key=key)
    return tuple(_variable(item, source, f"{key}.{i}") for i, item in enumerate(value))


def _variable(item: Any, source: str, key: str) -> EnvVar:
    entry = {"name": item} if isinstance(item, str) else item
    if not isinstance(entry, dict):
        raise ManifestError("expected NAME or a mapping with name", source=source, key=key)
    for extra in (k for k in entry if k not in _ENV_KEYS):
        log.debug("%s: %s.%s: unknown key, ignored", source, key, extra)
    name = entry.get("name")
    if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
        raise ManifestError("a variable's name is letters, digits and '_', not starting "
                            "with a digit", source=source, key=f"{key}.name")
    flags = {k: entry[k] for k in ("secret", "password") if k in entry}
    if any(not isinstance(v, bool) for v in flags.values()):
        raise ManifestError("secret and password are true or false", source=source, key=key)
    return EnvVar(name, str(entry.get("description") or ""), str(entry.get("url") or ""),
                  str(entry.get("prompt") or ""), **flags)


def _version(value: Any, source: str, key: str) -> int:
    if value != 1 or isinstance(value, bool):
        raise ManifestError("this Hermes reads manifest_version 1; update Hermes for newer "
                            "plugins", source=source, key=key)
    return 1


_CHECKS: dict[str, Callable[[Any, str, str], Any]] = {
    "name": _name, "version": _text, "description": _text, "author": _text, "kind": _kind,
    "label": _text, "provides_tools": _names, "provides_hooks": _names,
    "requires_env": _variables, "optional_env": _variables, "manifest_version": _version,
    "pip_dependencies": _requirements, "hooks": _names, "provides_web_providers": _names,
    "provides_browser_providers": _names, "platforms": _names,
    "external_dependencies": _programs}
_ENV_KEYS = frozenset(f.name for f in fields(EnvVar))
