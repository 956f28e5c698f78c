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
        description: Key for the Other service
        url: https://other.example/keys
        secret: true

A bad manifest is one line naming the file, the key and the fix (``ManifestError``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from hermes.agent.events import EVENTS
from hermes.errors import ConfigError, ManifestError, did_you_mean, one_of

MANIFEST_FILES = ("plugin.yaml", "plugin.yml")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KINDS = ("standalone", "backend", "exclusive", "platform", "model-provider")


def _text(value: Any) -> Any:
    """YAML reads ``version: 1.0`` as a number; a manifest means the text."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else value


def _env_item(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class EnvVar(BaseModel):
    """One environment variable a plugin needs (``requires_env``) or can use
    (``optional_env``); the simple form is the bare name."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, Field(pattern=ENV_NAME.pattern)]
    description: str = ""
    """Shown when ``hermes plugins enable`` asks for it."""
    url: str = ""
    """Where to get a value."""
    secret: bool = False
    """Typed without echo; ``password`` is accepted as its older spelling."""
    password: bool = False


EnvList = list[Annotated[EnvVar, BeforeValidator(_env_item)]]


class PluginManifest(BaseModel):
    """A plugin's ``plugin.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, Field(pattern=NAME.pattern)]
    """Defaults to the plugin's directory name."""
    version: Annotated[str, BeforeValidator(_text)] = ""
    description: str = ""
    author: str = ""
    kind: Literal["standalone", "backend", "exclusive", "platform", "model-provider"] = \
        "standalone"
    """What it provides, for listings; every kind registers through ``register(ctx)``."""
    label: str = ""
    provides_tools: list[str] = Field(default_factory=list)
    provides_hooks: list[str] = Field(default_factory=list)
    requires_env: EnvList = Field(default_factory=list)
    """Variables that must be set (in the environment or the profile's ``.env``) for
    the plugin to load."""
    optional_env: EnvList = Field(default_factory=list)
    manifest_version: Annotated[int, Field(ge=1, le=1)] = 1

    def missing_env(self, lookup: Any) -> list[str]:
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
    data = {"name": default_name, **data}
    try:
        manifest = PluginManifest.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, source) from None
    unknown = [h for h in manifest.provides_hooks if h not in EVENTS]
    if unknown:
        raise ManifestError(f"unknown hook event {unknown[0]!r}{did_you_mean(unknown[0], EVENTS)}"
                            f"; events: {one_of(EVENTS)}", source=source, key="provides_hooks")
    return manifest


def _first_error(exc: ValidationError, source: str) -> ManifestError:
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        known = list(PluginManifest.model_fields)
        field = str(error["loc"][-1])
        if len(error["loc"]) > 1:
            known = list(EnvVar.model_fields)
        return ManifestError(f"unknown key{did_you_mean(field, known)}; known: {one_of(known)}",
                             source=source, key=key)
    if key == "name" or key.endswith(".name"):
        return ManifestError("a name is 1-64 letters, digits, '.', '_' or '-' (an environment "
                             "variable's: letters, digits and '_')", source=source, key=key)
    return ManifestError(error["msg"], source=source, key=key)
