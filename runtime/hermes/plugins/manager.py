"""Plugins of one runtime: Python files under ``$HERMES_HOME/plugins/``.

Discovery only lists them; nothing is imported until the runtime enables
plugins (hooks and tools land with the plugin issue). Never module-global.
"""

from __future__ import annotations

from pathlib import Path


class PluginManager:
    def __init__(self, directory: Path):
        self.directory = directory

    def discover(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(p.name for p in self.directory.iterdir()
                      if p.is_dir() and (p / "plugin.yaml").is_file())
