"""hermes-agent's ``hermes_constants``: where the plugin's profile lives.

``get_hermes_home()`` is the home of the runtime that loaded the plugin (hermes-agent reads
``HERMES_HOME``; here two profiles in one process each see their own).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("hermes_constants")


def bind(home: Path | None) -> dict[str, Callable[..., Any]]:
    """The functions of one plugin, answering with ``home``."""
    def get_hermes_home() -> Path:
        if home is None:
            raise RuntimeError("hermes_constants.get_hermes_home: this plugin was loaded "
                               "without a profile home")
        return home

    def display_hermes_home() -> str:
        return str(get_hermes_home())

    def get_hermes_dir(new_subpath: str, old_name: str) -> Path:
        """``old_name`` where a home still has it, else ``new_subpath``."""
        old = get_hermes_home() / old_name
        return old if old.exists() else get_hermes_home() / new_subpath

    return {"get_hermes_home": get_hermes_home, "display_hermes_home": display_hermes_home,
            "get_hermes_dir": get_hermes_dir}
