"""Provenance: which layer, file or override set each config value.

Built from the same layers and choices composition uses, in merge order, so
``hermes config explain KEY`` and error messages can name the file that set a
key and what it overrode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes.config.groups import GROUPS
from hermes.config.layers import (
    Layer,
    available_options,
    option_file,
    read_yaml,
    split_defaults,
)
from hermes.config.overrides import Override
from hermes.errors import ConfigError, did_you_mean, one_of

_UNSET = object()


@dataclass(frozen=True)
class Choice:
    """The option picked for a config group, and who picked it."""

    option: str
    origin: str


@dataclass(frozen=True)
class Source:
    """One contributor to the composed config."""

    where: str
    """Human-readable: layer label and file, or the override's origin."""
    data: dict[str, Any] = field(default_factory=dict)
    """Values this source sets, as a nested mapping."""
    deletes: tuple[str, ...] = ()
    """Dotted keys this source deletes (``~key`` overrides)."""


@dataclass(frozen=True)
class Sources:
    """Every source in merge order plus the group choices."""

    items: list[Source]
    choices: dict[str, Choice]

    def history(self, key: str) -> list[tuple[str, Any]]:
        """``(where, value)`` for each source that set ``key``, in merge order."""
        found: list[tuple[str, Any]] = []
        for source in self.items:
            if key in source.deletes:
                found.append((source.where, "<deleted>"))
                continue
            value = lookup(source.data, key)
            if value is not _UNSET:
                found.append((source.where, value))
        return found

    def who_set(self, key: str) -> str | None:
        """Where the winning value of ``key`` (or its nearest parent) came from."""
        parts = key.split(".")
        while parts:
            history = self.history(".".join(parts))
            if history:
                return history[-1][0]
            parts.pop()
        return None


def lookup(data: Any, key: str) -> Any:
    """The value at dotted ``key`` in nested ``data``, or ``_UNSET``."""
    node = data
    for part in key.split("."):
        # YAML keys may be ints or bools (``1: x``); errors name them as strings.
        if not isinstance(node, dict):
            return _UNSET
        match = next((k for k in node if str(k) == part), _UNSET)
        if match is _UNSET:
            return _UNSET
        node = node[match]
    return node


def is_set(data: Any, key: str) -> bool:
    """True if nested ``data`` holds dotted ``key`` (a value, or a mapping under it)."""
    return lookup(data, key) is not _UNSET


def _nest(key: str, value: Any) -> dict[str, Any]:
    node: Any = value
    for part in reversed(key.split(".")):
        node = {part: node}
    return node


def override_source(override: Override) -> Source:
    """The values (or deletion) one override sets."""
    text = override.text
    where = f"{override.origin}: {text}"
    if text.startswith("~"):
        return Source(where, deletes=(text[1:].split("=", 1)[0],))
    key, _, value = text.lstrip("+").partition("=")
    return Source(where, _nest(key, value.strip("'\"")))


def build_sources(
    layers: list[Layer], choices: dict[str, Choice], key_overrides: list[Override]
) -> Sources:
    """Sources in the order Hydra merges them: group options, layers, overrides."""
    items: list[Source] = []
    for group in GROUPS:
        choice = choices.get(group)
        path = option_file(layers, group, choice.option) if choice else None
        if choice and path:
            body, _ = split_defaults(read_yaml(path), path)
            items.append(Source(f"group option {group}/{choice.option} ({path})", {group: body}))
    items += [Source(layer.where, layer.body) for layer in layers]
    items += [override_source(o) for o in key_overrides]
    return Sources(items, choices)


def check_choices(layers: list[Layer], choices: dict[str, Choice]) -> None:
    """Raise a ``ConfigError`` listing the options when a chosen option does not exist."""
    for group in GROUPS:
        if group not in choices:
            raise ConfigError(f"no option chosen for group {group}", source="packaged defaults")
        choice = choices[group]
        if option_file(layers, group, choice.option) is None:
            options = available_options(layers, group)
            raise ConfigError(
                f'unknown option "{choice.option}"{did_you_mean(choice.option, options)}; '
                f"available: {one_of(options)}",
                source=choice.origin,
                key=group,
            )
