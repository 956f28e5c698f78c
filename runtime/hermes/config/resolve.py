"""Resolve interpolations (``${secret:NAME}``, ``${a.b}``) in a composed config.

OmegaConf's resolvers are process-wide, so resolution shares ``CONFIG_LOCK``
with Hydra composition: the ``secret`` resolver is registered for one home's
secrets, used, and replaced under the lock.

A config whose only interpolations are whole values ``${secret:NAME}`` and that has no
missing value (``???``) — the packaged defaults and most profiles — is resolved without
OmegaConf (``_plain_secrets``: the same values; importing and running OmegaConf cost
~0.1 s of every one-shot and of every command of the warm server). Anything else goes
through OmegaConf, which also reports the errors.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any, cast

from hermes.config.sources import Sources
from hermes.credentials import REDACTED, Secrets
from hermes.errors import ConfigError, MissingValueError

if TYPE_CHECKING:
    from omegaconf.errors import OmegaConfBaseException

_SECRET = re.compile(r"\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}")

# Guards Hydra's and OmegaConf's process-wide singletons.
CONFIG_LOCK = threading.Lock()


def resolve(raw: dict[str, Any], secrets: Secrets, sources: Sources
            ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(resolved, display)``: secrets real in the first, redacted in the second."""
    plain = _plain_secrets(raw, secrets)
    if plain is not None:
        return plain
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

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


def _plain_secrets(raw: dict[str, Any], secrets: Secrets
                   ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``resolve``'s answer without OmegaConf, or None when ``raw`` needs it: a string
    holding ``${`` other than a whole ``${secret:NAME}``, a missing value, a secret
    whose value itself holds ``${`` (OmegaConf would parse it), or a non-string key."""
    found: dict[str, str | None] = {}

    def walk(node: Any) -> bool:
        if isinstance(node, dict):
            return all(isinstance(k, str) and walk(v) for k, v in node.items())
        if isinstance(node, list):
            return all(walk(item) for item in node)
        if not isinstance(node, str) or ("${" not in node and node != "???"):
            return True
        match = _SECRET.fullmatch(node)
        if match is None:
            return False
        value = found[match[1]] = secrets.get(match[1])
        return value is None or "${" not in value

    if not walk(raw):
        return None

    def copy(node: Any, shown: bool) -> Any:
        if isinstance(node, dict):
            return {k: copy(v, shown) for k, v in node.items()}
        if isinstance(node, list):
            return [copy(item, shown) for item in node]
        if isinstance(node, str) and node.startswith("${secret:"):
            name = node[len("${secret:"):-1]
            if not shown:
                return found[name]
            return REDACTED if found[name] else f"<unset: {name}>"
        return node

    return copy(raw, shown=False), copy(raw, shown=True)


def _register_secret_resolver(resolver: Any) -> None:
    from omegaconf import OmegaConf

    OmegaConf.register_new_resolver("secret", resolver, replace=True, use_cache=False)


def _to_plain(cfg: Any, sources: Sources) -> dict[str, Any]:
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

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
