"""Drift between a profile and what its deployment declares read-only.

A deployment sets config in system layers (``HERMES_CONFIG_LAYERS``: the NixOS
module's rendered settings, an image's layer) and secrets in the environment (the
unit's ``EnvironmentFile=``, named in ``secrets.environment_files``). A value the
profile writes over one of them silently wins, and stops the deployment from changing
it: ``hermes config set`` refuses that (``--force`` overrides, as the reference refuses
writes to a managed install), and ``hermes doctor`` names what already shadows.
YAML only: no Hydra.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hermes.config.groups import GROUPS
from hermes.config.layers import Layer, load_layers
from hermes.config.sources import is_set
from hermes.credentials import Secrets
from hermes.errors import ConfigError
from hermes.home import Home


@dataclass(frozen=True)
class Shadow:
    """A key the profile sets over a read-only system layer's value."""

    key: str
    system: Layer
    """The highest system layer that sets ``key``."""
    profile: Layer
    """The profile's layer (or one it extends) that shadows it."""


def is_system(layer: Layer) -> bool:
    return layer.label == "system" or layer.label.startswith("system:")


def system_setter(layers: list[Layer], key: str) -> Layer | None:
    """The highest system layer that sets ``key``: a value (or a mapping holding it),
    or, for a group's name, the group's option."""
    for layer in reversed([layer for layer in layers if is_system(layer)]):
        if key in layer.choices if key in GROUPS else is_set(layer.body, key):
            return layer
    return None


class DeclaredElsewhere(ConfigError):
    """A write refused because the deployment declares the value: ``where`` sets it,
    ``fix`` says how to change it there, ``override`` is the CLI's way past the refusal
    (``--force``). Its line is the CLI's; a caller that offers no override (the
    dashboard) says ``without_override()``."""

    def __init__(self, where: str, fix: str, override: str, *, key: str):
        self.where, self.fix, self.override = where, fix, override
        super().__init__(f"{where}; change it there, or {override}", key=key)

    def without_override(self) -> str:
        """The refusal's line with the deployment-side fix instead of ``--force``."""
        return str(ConfigError(f"{self.where}; {self.fix}", source=self.source, key=self.key))


def refuse_system_value(home: Home, environ: Mapping[str, str], key: str) -> None:
    """Raise ``DeclaredElsewhere`` if a read-only system layer sets ``key``."""
    layer = system_setter(load_layers(home, environ), key)
    if layer is not None:
        raise DeclaredElsewhere(
            f"set by the read-only system layer {layer.label} ({layer.file})",
            "change it where that layer is defined (a directory of HERMES_CONFIG_LAYERS, "
            "or the NixOS module's settings that render it)",
            "pass --force to override it in this profile", key=key)


def shadows(home: Home, environ: Mapping[str, str]) -> tuple[list[Shadow], bool]:
    """Profile values over system-layer values, and whether there is a system layer."""
    layers = load_layers(home, environ)
    found = [Shadow(key, system, own) for own in layers
             if own.label == "profile" or own.label.startswith("extends:")
             for key in [*own.choices, *leaf_keys(own.body)]
             if (system := system_setter(layers, key)) is not None]
    return found, any(is_system(layer) for layer in layers)


def leaf_keys(data: Any, prefix: str = "") -> Iterator[str]:
    """Dotted keys of nested ``data``'s values (an empty mapping is one)."""
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from leaf_keys(value, dotted + ".")
        else:
            yield dotted


def layered_secrets(home: Home, environ: Mapping[str, str]) -> Secrets:
    """The home's secrets with the ``secrets`` section its layers set (environment and
    command-line overrides aside), without composing."""
    section: dict[str, Any] = {}
    for layer in load_layers(home, environ):
        own = layer.body.get("secrets")
        section |= own if isinstance(own, dict) else {}
    return Secrets.for_config(home.env_file, environ, section)


def refuse_environment_secret(home: Home, environ: Mapping[str, str], name: str) -> None:
    """Raise ``DeclaredElsewhere`` if the environment sets ``name`` and wins over ``.env``."""
    secrets = layered_secrets(home, environ)
    where = secrets.from_environment(name)
    if secrets.precedence == "environment" and where is not None:
        raise DeclaredElsewhere(
            f"set by {where}, which wins over .env (secrets.precedence: environment)",
            "change it there (the deployment's environment or its EnvironmentFile)",
            "pass --force to write .env anyway (unused while it is set there)", key=name)


def shadowed_secrets(secrets: Secrets) -> list[str]:
    """One line per ``.env`` name the environment also sets: who shadows whom."""
    lines = []
    for name in sorted(secrets.dotenv):
        where = secrets.from_environment(name)
        if where is None:
            continue
        if secrets.precedence == "environment":
            lines.append(f"{name} in .env is shadowed by {where}")
        else:
            lines.append(f"{name} in .env shadows {where}")
    return lines
