"""hermes-agent's ``hermes_cli.config``, read side: ``load_config()`` is the profile's own
``config.yaml`` as written (a plugin's ``plugins.<name>`` section lives there, as in
hermes-agent), ``cfg_get`` walks it. Writing config (``save_config``) is refused: edits go
through ``hermes config set``, which keeps comments and validates."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("hermes_cli.config")
_ABSENT = object()


def cfg_get(cfg: Mapping[str, Any] | None, *keys: str, default: Any = None) -> Any:
    """``cfg[k1][k2]...``, or ``default`` where a key is absent or a level is no mapping."""
    value: Any = cfg
    for key in keys:
        if not isinstance(value, Mapping):
            return default
        value = value.get(key, _ABSENT)
        if value is _ABSENT:
            return default
    return value


def bind(home: Path | None) -> dict[str, Callable[..., Any]]:
    """``load_config`` of one plugin: its profile's ``config.yaml``."""
    def load_config(*_: Any, **__: Any) -> dict[str, Any]:
        from hermes.config.layers import read_yaml

        return read_yaml(home / "config.yaml") if home is not None else {}

    def get_env_value(name: str) -> str | None:
        """A variable: the environment, then the profile's ``.env`` (None: neither)."""
        from hermes.credentials import read_env_file

        if name in os.environ:
            return os.environ[name]
        return read_env_file(home / ".env").get(name) if home is not None else None

    return {"load_config": load_config, "load_config_readonly": load_config,
            "get_env_value": get_env_value}
