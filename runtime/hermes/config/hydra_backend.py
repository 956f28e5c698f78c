"""The Hydra side of composition: parse overrides, compose the unresolved config.

Hydra keeps process-wide state (``GlobalHydra``, ``ConfigStore``); a gateway
composes several profiles' configs in one process, so composition runs under
``CONFIG_LOCK`` and leaves that state as it found it. This is the only module
that imports Hydra, and it is imported only when the composition cache misses.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from hydra import compose, initialize
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import OverrideType
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from hermes.config.groups import GROUPS
from hermes.config.layers import Layer, group_dirs, layer_choices
from hermes.config.overrides import Override, quote
from hermes.config.resolve import CONFIG_LOCK, first_line
from hermes.config.sources import Choice, Sources, check_choices
from hermes.errors import ConfigError

_PRIMARY = "__hermes__"
_LAYER_GROUP = "_hermes_layer_"


def split_overrides(
    layers: list[Layer], requested: list[Override]
) -> tuple[dict[str, Choice], list[Override]]:
    """Apply group choices (``provider=x``) ourselves; keep key overrides for Hydra.

    Every override is parsed with Hydra's grammar, so syntax errors are caught here.
    """
    choices = {g: Choice(o, layer.where) for g, (o, layer) in layer_choices(layers).items()}
    parser = OverridesParser.create()
    keys: list[Override] = []
    for override in requested:
        try:
            (parsed,) = parser.parse_overrides([override.text])
        except HydraException as exc:
            first = str(exc).strip().splitlines()[0]
            raise ConfigError(f"bad override {override.text!r}: {first}",
                              source=override.origin) from exc
        group = parsed.key_or_group
        if not group or group.split(".")[0] in ("hydra", _LAYER_GROUP):
            raise ConfigError(f"bad override {override.text!r}: expected KEY=VALUE with a "
                              "config key", source=override.origin)
        if group in GROUPS and parsed.type == OverrideType.CHANGE:
            if not isinstance(parsed.value(), str):
                raise ConfigError(
                    f"{override.text!r}: one option per run; compare several with `hermes ab`",
                    source=override.origin,
                )
            choices[group] = Choice(str(parsed.value()), override.origin)
        else:
            keys.append(override)
    check_choices(layers, choices)
    return choices, keys


def hydra_compose(
    layers: list[Layer],
    choices: dict[str, Choice],
    key_overrides: list[Override],
    sources: Sources,
) -> dict[str, Any]:
    """Compose the unresolved config with Hydra (interpolations stay as written)."""
    search = ",".join(quote(f"file://{d}") for d in group_dirs(layers) if d.is_dir())
    hydra_overrides = [f"hydra.searchpath=[{search}]"] + [o.text for o in key_overrides]
    defaults: list[Any] = [{g: choices[g].option} for g in GROUPS]
    defaults += [f"{_LAYER_GROUP}/l{i}" for i in range(len(layers))] + ["_self_"]
    with CONFIG_LOCK:
        GlobalHydra.instance().clear()
        store = ConfigStore.instance()
        try:
            for i, layer in enumerate(layers):
                _store_layer(store, f"l{i}", layer)
            store.store(name=_PRIMARY, node={"defaults": defaults})
            with initialize(version_base="1.3", config_path=None):
                cfg = compose(_PRIMARY, overrides=hydra_overrides)
            raw = OmegaConf.to_container(cfg, resolve=False)
        except (HydraException, ValueError) as exc:  # Hydra rejects some overrides with ValueError
            raise _hydra_error(exc, key_overrides) from exc
        except OmegaConfBaseException as exc:  # e.g. a malformed ${...} an override brings in
            key = str(getattr(exc, "full_key", "") or "")
            raise ConfigError(first_line(exc), source=sources.who_set(key) if key else None,
                              key=key or None) from exc
        finally:
            store.repo.pop(_LAYER_GROUP, None)
            store.repo.pop(f"{_PRIMARY}.yaml", None)
            GlobalHydra.instance().clear()
    assert isinstance(raw, dict)
    return cast(dict[str, Any], raw)


def _store_layer(store: ConfigStore, name: str, layer: Layer) -> None:
    try:
        store.store(group=_LAYER_GROUP, name=name, package="_global_",
                    node=copy.deepcopy(layer.body))
    except OmegaConfBaseException as exc:  # e.g. a malformed interpolation such as ${}
        key = str(getattr(exc, "full_key", "") or "")
        raise ConfigError(first_line(exc), source=layer.where, key=key or None) from exc


def _hydra_error(exc: HydraException | ValueError, key_overrides: list[Override]) -> ConfigError:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    message = lines[0] if lines else type(exc).__name__
    origin = "command line"
    for override in key_overrides:
        key = override.text.lstrip("+~").split("=", 1)[0]
        if f"'{key}'" in message:
            origin = override.origin
            if "Could not append" in message:
                return ConfigError(
                    f"{key!r} is already set; change it with {override.text.lstrip('+')}",
                    source=origin,
                )
            if "Could not override" in message:
                return ConfigError(
                    f"no such key {key!r}; add a new key with +{override.text.lstrip('+')}",
                    source=origin,
                )
            if "Could not delete" in message:
                return ConfigError(f"cannot delete {key!r}: it is not set", source=origin)
    return ConfigError(message, source=origin)
