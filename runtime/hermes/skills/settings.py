"""``skills.*`` for management commands, read from the config layers' YAML alone.

``hermes skills ...`` must answer in a fraction of a second, so it does not compose
the config with Hydra: like ``hermes profile list`` it reads the layers (packaged,
system, extends, profile) and takes the last value each sets. Environment and
command-line overrides apply to runtimes (chat, gateway), not here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hermes.errors import ConfigError
from hermes.home import Home
from hermes.skills.store import BUNDLED_DIR, SkillsStore


def layered_skills_settings(home: Home, environ: Mapping[str, str]) -> dict[str, Any]:
    """The merged ``skills`` mapping of the layers; a bad value names its file and key."""
    from hermes.config.layers import load_layers

    env = {k: v for k, v in environ.items() if k != "HERMES_HOME"}
    merged: dict[str, Any] = {}
    for layer in load_layers(home, env):
        section = layer.body.get("skills")
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError("expected a mapping", source=str(layer.file), key="skills")
        directories = section.get("directories", [])
        if not isinstance(directories, list) or not all(isinstance(d, str) for d in directories):
            raise ConfigError("expected a list of directories", source=str(layer.file),
                              key="skills.directories")
        merged.update(section)
    return merged


def management_store(home: Home, environ: Mapping[str, str],
                     warn: Callable[[str], None] | None = None) -> SkillsStore:
    """The home's store as the layers configure it (see the module docstring); ``warn``
    gets the one-line warning of each malformed skill."""
    settings = layered_skills_settings(home, environ)
    directories = [home.path / Path(d).expanduser() for d in settings.get("directories") or []]
    return SkillsStore(home.skills_dir, directories=directories,
                       bundled=BUNDLED_DIR if settings.get("bundled", True) is not False
                       else None,
                       cache_file=home.path / ".cache" / "skills.json", warn=warn)
