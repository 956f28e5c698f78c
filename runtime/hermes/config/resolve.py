"""Resolve interpolations (``${secret:NAME}``, ``${a.b}``) in a composed config.

OmegaConf's resolvers are process-wide, so resolution shares ``CONFIG_LOCK``
with Hydra composition: the ``secret`` resolver is registered for one home's
secrets, used, and replaced under the lock.
"""

from __future__ import annotations

import threading
from typing import Any, cast

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from hermes.config.sources import Sources
from hermes.credentials import REDACTED, Secrets
from hermes.errors import ConfigError, MissingValueError

# Guards Hydra's and OmegaConf's process-wide singletons.
CONFIG_LOCK = threading.Lock()


def resolve(raw: dict[str, Any], secrets: Secrets, sources: Sources
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(resolved, display)``: secrets real in the first, redacted in the second."""
    with CONFIG_LOCK:
        try:
            cfg = OmegaConf.create(raw)
        except OmegaConfBaseException as exc:
            key = str(getattr(exc, "full_key", "") or "")
            raise ConfigError(first_line(exc), source=sources.who_set(key) if key else None,
                              key=key or None) from exc
        _register_secret_resolver(secrets.get)
        resolved = _to_plain(cfg, sources)
        _register_secret_resolver(
            lambda name: REDACTED if secrets.get(name) else f"<unset: {name}>"
        )
        display = _to_plain(cfg, sources)
    return resolved, display


def first_line(exc: OmegaConfBaseException) -> str:
    return str(getattr(exc, "msg", exc)).strip().splitlines()[0]


def _register_secret_resolver(resolver: Any) -> None:
    OmegaConf.register_new_resolver("secret", resolver, replace=True, use_cache=False)


def _to_plain(cfg: Any, sources: Sources) -> dict[str, Any]:
    try:
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as exc:
        key = str(getattr(exc, "full_key", "") or "")
        where = sources.who_set(key) if key else None
        if type(exc).__name__ == "MissingMandatoryValue":
            raise MissingValueError(f"missing value — set it with `hermes config set {key} VALUE`",
                              source=where, key=key) from exc
        message = str(getattr(exc, "msg", exc)).strip().splitlines()[0]
        raise ConfigError(message, source=where, key=key) from exc
    assert isinstance(data, dict)
    return cast(dict[str, Any], data)
