"""After ``config set GROUP OPTION``: which keys of the profile still override the option.

Switching ``provider`` from ``custom`` to ``anthropic`` keeps ``provider.model``
and ``provider.api_base`` in the profile's file, and they win over the new
option's own values. The user is told, key by key, with the command that drops
each one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes.config.layers import layer_choices, load_layers, option_file, read_yaml
from hermes.credentials import REDACTED, is_secret_key
from hermes.errors import ConfigError
from hermes.home import Home


def current_option(home: Home, environ: Mapping[str, str], group: str) -> str | None:
    """The option the layers choose for ``group`` now (``None`` if unknown)."""
    try:
        chosen = layer_choices(load_layers(home, environ)).get(group)
    except ConfigError:
        return None
    return chosen[0] if chosen else None


def override_notes(home: Home, environ: Mapping[str, str], group: str, option: str,
                   section: Any) -> list[str]:
    """One note per key under ``section`` (the profile's ``GROUP:`` mapping)."""
    if not isinstance(section, Mapping) or not section:
        return []
    defaults: dict[str, Any] = {}
    try:
        path = option_file(load_layers(home, environ), group, option)
        defaults = read_yaml(path) if path is not None else {}
    except ConfigError:
        pass
    notes = []
    for key, value in _leaves(section):
        dotted = f"{group}.{key}"
        notes.append(f"note: {home.config_file}: {dotted} = {_shown(dotted, value)} still "
                     f"overrides {group}/{option} ({_default(defaults, key)}); drop it with "
                     f"`hermes config unset {dotted}`")
    return notes


def _leaves(section: Mapping[Any, Any], prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for key, value in section.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            found += _leaves(value, f"{dotted}.")
        else:
            found.append((dotted, value))
    return found


def _default(defaults: Mapping[str, Any], key: str) -> str:
    node: Any = defaults
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return "which does not set it"
        node = node[part]
    return f"which sets {_shown(key, node)}"


def _shown(key: str, value: Any) -> str:
    if is_secret_key(key) and isinstance(value, str) and not value.startswith("${"):
        return REDACTED
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return str(value)
