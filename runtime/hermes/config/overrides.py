"""Environment overrides (12-factor) and the command-line override list.

Documented environment variables, applied after every file layer and before
command-line overrides:

=========================  ==========================================
``HERMES_PROVIDER``        group choice ``provider=<value>``
``HERMES_MODEL``           ``provider.model=<value>``
``HERMES_TOOLSETS``        ``toolsets=<value>``: an option (coding) or toolset names (file,terminal)
``HERMES_ENVIRONMENT``     group choice ``environment=<value>``
``HERMES_MAX_ITERATIONS``  ``agent.max_iterations=<value>``
``HERMES_CONFIG__A__B``    any key: ``a.b=<value>``
=========================  ==========================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

ENV_OVERRIDES: dict[str, str] = {
    "HERMES_PROVIDER": "provider",
    "HERMES_MODEL": "provider.model",
    "HERMES_TOOLSETS": "toolsets",
    "HERMES_ENVIRONMENT": "environment",
    "HERMES_MAX_ITERATIONS": "agent.max_iterations",
}
GENERIC_PREFIX = "HERMES_CONFIG__"
_PLAIN_VALUE = re.compile(r"[\w./:@+-]*")


@dataclass(frozen=True)
class Override:
    """One override in Hydra's grammar and where it came from."""

    text: str
    """The override, e.g. ``provider.model=gpt-4o`` or ``~agent.personality``."""
    origin: str
    """``environment HERMES_MODEL`` or ``command line``."""


def quote(value: str) -> str:
    """Quote a value for Hydra's override grammar unless it is plain."""
    if _PLAIN_VALUE.fullmatch(value) and value:
        return value
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def env_overrides(environ: Mapping[str, str]) -> list[Override]:
    """Overrides taken from documented environment variables, in a stable order."""
    found: list[Override] = []
    for name, key in ENV_OVERRIDES.items():
        if environ.get(name):
            found.append(Override(f"{key}={quote(environ[name])}", f"environment {name}"))
    for name in sorted(environ):
        if name.startswith(GENERIC_PREFIX) and len(name) > len(GENERIC_PREFIX):
            key = ".".join(part.lower() for part in name[len(GENERIC_PREFIX):].split("__"))
            found.append(Override(f"{key}={quote(environ[name])}", f"environment {name}"))
    return found


def cli_overrides(tokens: list[str]) -> list[Override]:
    return [Override(token, "command line") for token in tokens]


_SIMPLE_CHOICE = re.compile(r"([a-z_]+)=([\w.-]+)")


def quick_split(requested: list[Override], groups: tuple[str, ...]
                ) -> tuple[dict[str, tuple[str, str]], list[Override]] | None:
    """Classify overrides without Hydra's parser: ``(choices, key overrides)``.

    ``choices`` maps a group to ``(option, origin)``. Returns ``None`` when a
    token that names a group is not a plain ``group=option``: only Hydra's
    parser can say what it means (and report it if it is wrong).
    """
    choices: dict[str, tuple[str, str]] = {}
    keys: list[Override] = []
    for override in requested:
        text = override.text
        if text.split("=", 1)[0] in groups:
            match = _SIMPLE_CHOICE.fullmatch(text)
            if match is None:
                return None
            choices[match.group(1)] = (match.group(2), override.origin)
        else:
            keys.append(override)
    return choices, keys
