"""``plugins.*`` and ``hooks`` for commands that do not build a runtime.

``hermes plugins list``, the plugin CLI commands and ``hermes --help`` must answer at
once, so, like ``hermes skills``, they read the config layers' YAML (packaged,
system, extends, profile) instead of composing with Hydra, and take the last value
each sets; a malformed value names its file and key. A runtime takes the same
settings from its composed config (``from_config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.errors import ConfigError
from hermes.home import Home
from hermes.plugins.discovery import Found

LIST_KEYS = ("enabled", "disabled", "directories", "allow_shadow")


@dataclass(frozen=True)
class PluginSettings:
    """What decides which plugins a home loads (``PluginsConfig``'s values)."""

    enabled: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    directories: tuple[Path, ...] = ()
    """``plugins.directories``, relative ones resolved against the home."""
    project: bool = False
    hook_timeout: float = 10.0
    allow_shadow: tuple[str, ...] = ()
    """``plugins.allow_shadow``: ``SOURCE:NAME`` of plugins that may replace an enabled
    plugin of their name from another source."""

    @classmethod
    def from_config(cls, home: Home, section: Any) -> PluginSettings:
        """From a composed config's ``plugins`` section."""
        return cls(tuple(section.enabled), tuple(section.disabled),
                   tuple(home.path / Path(d).expanduser() for d in section.directories),
                   bool(section.project), float(section.hook_timeout),
                   tuple(section.allow_shadow))

    def is_disabled(self, *names: str) -> bool:
        return any(name in self.disabled for name in names)

    def is_enabled(self, *names: str) -> bool:
        """Named in ``enabled`` and in no ``disabled`` (which always wins)."""
        return not self.is_disabled(*names) and any(name in self.enabled for name in names)

    def may_shadow(self, plugin: Found, hidden: Found) -> bool:
        """Whether ``plugin`` may replace ``hidden`` (same key, later source): always
        within one kind of source or when ``hidden`` is not enabled, else only with
        ``plugins.allow_shadow`` naming ``plugin``'s source."""
        if plugin.source == hidden.source or not self.is_enabled(*hidden.names):
            return True
        return any(f"{plugin.source}:{name}" in self.allow_shadow for name in plugin.names)


def layered_plugin_settings(home: Home, environ: Mapping[str, str]) -> PluginSettings:
    """The merged ``plugins`` section of the config layers (see the module docstring)."""
    merged = layered_section(home, environ, "plugins")
    return PluginSettings(
        tuple(merged.get("enabled") or ()), tuple(merged.get("disabled") or ()),
        tuple(home.path / Path(d).expanduser() for d in merged.get("directories") or ()),
        merged.get("project") is True, float(merged.get("hook_timeout") or 10.0),
        tuple(merged.get("allow_shadow") or ()))


def layered_hooks(home: Home, environ: Mapping[str, str]) -> dict[str, list[Any]]:
    """The merged ``hooks`` section (shell hooks by event), as the layers write it."""
    return {str(k): v for k, v in layered_section(home, environ, "hooks").items()
            if isinstance(v, list)}


def layered_secrets(home: Home, environ: Mapping[str, str]) -> Any:
    """The home's ``Secrets`` as the layers' ``secrets`` section configures them."""
    from hermes.credentials import Secrets

    return Secrets.for_config(home.env_file, environ, layered_section(home, environ, "secrets"))


def layered_section(home: Home, environ: Mapping[str, str], name: str) -> dict[str, Any]:
    """Top-level section ``name`` merged over the layers (later keys win)."""
    from hermes.config.layers import load_layers

    env = {k: v for k, v in environ.items() if k != "HERMES_HOME"}
    merged: dict[str, Any] = {}
    for layer in load_layers(home, env):
        section = layer.body.get(name)
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError("expected a mapping", source=str(layer.file), key=name)
        for key in LIST_KEYS if name == "plugins" else ():
            value = section.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError("expected a list of names", source=str(layer.file),
                                  key=f"{name}.{key}")
        merged.update(section)
    return merged
