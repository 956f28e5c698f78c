"""Which layer and file set a composed config's keys, and what they overrode: what
``hermes config explain KEY`` prints, and the dashboard's Config page shows for every key.
YAML only: composing (``compose_config``) is the caller's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes.config.drift import leaf_keys
from hermes.config.groups import GROUPS
from hermes.credentials import REDACTED, is_secret_key
from hermes.errors import ConfigError, did_you_mean


@dataclass(frozen=True)
class Explained:
    """One key of a composed config: its value (secrets redacted) and who set it."""

    key: str
    value: Any
    set_by: str | None
    """The winning source (``profile (/.../config.yaml)``...); None: the schema default."""
    overrode: list[tuple[str, Any]] = field(default_factory=list)
    """``(where, value)`` of the values it overrode, the latest first (secrets redacted)."""
    group: bool = False
    """A group's choice (``provider``): ``value`` is the option, ``set_by`` who chose it."""


def lookup_key(data: dict[str, Any], key: str) -> Any:
    """The value at dotted ``key``; a ``ConfigError`` naming the keys there if absent."""
    node: Any = data
    for i, part in enumerate(key.split(".")):
        if not isinstance(node, dict) or part not in node:
            choices = list(node) if isinstance(node, dict) else []
            prefix = ".".join(key.split(".")[:i])
            raise ConfigError(f"no such key{did_you_mean(part, choices)}"
                              + (f"; keys under {prefix}: {', '.join(choices)}" if prefix else ""),
                              key=key)
        node = node[part]
    return node


def shown_value(composed: Any, key: str) -> Any:
    """``key`` in the shown config (secrets redacted), else its schema default (which no
    file sets)."""
    try:
        return lookup_key(composed.display, key)
    except ConfigError:
        try:
            return lookup_key(composed.config.model_dump(mode="json"), key)
        except ConfigError:
            pass
        raise


def explain_key(composed: Any, key: str) -> Explained:
    """``key`` of a ``ComposedConfig``: value, setter and the values it overrode."""
    if key in GROUPS:
        choice = composed.sources.choices[key]
        return Explained(key, choice.option, choice.origin, group=True)
    value = shown_value(composed, key)
    history = composed.sources.history(key)
    if not history:
        return Explained(key, value, None)
    overrode = [(where, REDACTED if is_secret_key(key) else old)
                for where, old in reversed(history[:-1])]
    return Explained(key, value, history[-1][0], overrode)


def explain_all(composed: Any) -> list[Explained]:
    """Every group choice, then every leaf key (a list is one value) of the composed
    config and the schema's defaults, in the schema's order."""
    keys = dict.fromkeys(leaf_keys(composed.config.model_dump(mode="json")))
    keys |= dict.fromkeys(leaf_keys(composed.display))
    found = []
    for key in [*GROUPS, *keys]:
        try:
            found.append(explain_key(composed, key))
        except ConfigError:  # a key YAML made no string (``1: x``): not a config key
            continue
    return found

