"""Placeholders that are not values: ``<redacted>`` comes from a profile export.

An export replaces literal secrets with ``<redacted>``; left in a config (or
put into ``.env``), it would be sent to the provider as a key. Composition
refuses it, so ``config validate``, ``config set``, ``doctor`` and ``chat``
all name the key and the fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes.config.sources import Sources, lookup
from hermes.credentials import REDACTED
from hermes.errors import ConfigError

_SECRET_PREFIX = "${secret:"


def check_placeholders(raw: dict[str, Any], resolved: dict[str, Any], sources: Sources,
                       env_file: Path) -> None:
    """Raise ``ConfigError`` for the first ``<redacted>`` value, written in a layer or
    coming from a secret."""
    for key, value in _leaves(raw):
        if value == REDACTED:
            raise ConfigError(
                f"{REDACTED} is a placeholder from a profile export, not a value — remove it "
                f"(`hermes config unset {key}`) and set the real secret in .env "
                "(`hermes config set NAME_API_KEY …`)", source=sources.who_set(key), key=key)
    for key, value in _leaves(resolved):
        reference = lookup(raw, key)
        if value == REDACTED and isinstance(reference, str):
            name = reference.removeprefix(_SECRET_PREFIX).rstrip("}")
            raise ConfigError(
                f"is {REDACTED}, a placeholder from a profile export (used by {key}) — set the "
                f"real value: `hermes config set {name} …`",
                source=f"{env_file} or the environment", key=name)


def redacted_keys(raw: dict[str, Any]) -> list[str]:
    """Dotted keys whose value is ``<redacted>``. In a composed config's ``raw`` (where
    placeholders were refused and literal secrets redacted) these are the secrets
    written as values instead of by reference."""
    return [key for key, value in _leaves(raw) if value == REDACTED]


def _leaves(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` for every scalar in a plain tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}{key}.")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, f"{prefix}{i}.")
    else:
        yield prefix.rstrip("."), node
