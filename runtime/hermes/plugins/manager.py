"""Plugins of one runtime: directories under ``$HERMES_HOME/plugins/``, then under each
of ``plugins.directories`` (read-only, e.g. from the NixOS module's ``extraPlugins``).

Discovery only lists them; nothing is imported until the runtime enables
plugins (hooks and tools land with the plugin issue). Never module-global.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class PluginManager:
    def __init__(self, directory: Path, extra: Sequence[str | Path] = ()):
        self.directory = directory
        self.directories = [directory, *(Path(p) for p in extra)]
        """Searched in this order; the first plugin of a name wins (the home's own)."""

    def discover(self) -> list[str]:
        names: set[str] = set()
        for directory in self.directories:
            if directory.is_dir():
                names.update(p.name for p in directory.iterdir()
                             if p.is_dir() and (p / "plugin.yaml").is_file())
        return sorted(names)
