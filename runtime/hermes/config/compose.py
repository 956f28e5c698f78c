"""Compose one profile's config with Hydra, then validate it against the schema.

Hydra keeps process-wide state (``GlobalHydra``, ``ConfigStore``, OmegaConf
resolvers). A gateway composes several profiles' configs in one process, so
every composition runs under ``_HYDRA_LOCK`` and leaves that state as it found
it. This is the only module that imports Hydra.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from hydra import compose, initialize
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import OverrideType
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import ValidationError

from hermes.config.layers import (
    Layer,
    available_options,
    group_dirs,
    layer_choices,
    load_layers,
    option_file,
)
from hermes.config.overrides import Override, cli_overrides, env_overrides, quote
from hermes.config.schema import GROUPS, HermesConfig
from hermes.config.sources import Choice, Sources, build_sources
from hermes.credentials import REDACTED, Secrets, is_secret_key, redact_tree
from hermes.errors import ConfigError, did_you_mean, one_of
from hermes.home import Home

# Guards Hydra's and OmegaConf's process-wide singletons (see module docstring).
_HYDRA_LOCK = threading.Lock()
_PRIMARY = "__hermes__"
_LAYER_GROUP = "_hermes_layer_"


@dataclass(frozen=True)
class ComposedConfig:
    """A validated config and everything needed to show and explain it."""

    home: Home
    config: HermesConfig
    """The validated config, secrets resolved (never print it whole)."""
    raw: dict[str, Any]
    """Composed values with interpolations such as ``${secret:X}`` unresolved."""
    display: dict[str, Any]
    """Composed values resolved, with every secret redacted."""
    sources: Sources
    """Every source that contributed, for ``hermes config explain``."""


def compose_config(
    home: Home,
    environ: Mapping[str, str],
    overrides: Sequence[str] = (),
    *,
    profile_text: str | None = None,
) -> ComposedConfig:
    """Compose ``home``'s config from every layer plus overrides, and validate it.

    Raises ``ConfigError`` (one line naming the file and key) on any problem.
    """
    layers = load_layers(home, environ, profile_text=profile_text)
    requested = env_overrides(environ) + cli_overrides(list(overrides))
    choices, key_overrides = _split_overrides(layers, requested)
    sources = build_sources(layers, choices, key_overrides)
    secrets = Secrets(home.env_file, environ)
    raw, resolved, display = _hydra_compose(layers, choices, key_overrides, secrets, sources)
    try:
        config = HermesConfig.model_validate(resolved)
    except ValidationError as exc:
        raise _validation_error(exc, sources) from exc
    # Literal secrets written into a file (``api_key: sk-...``) are redacted too.
    return ComposedConfig(home, config, redact_tree(raw), redact_tree(display), sources)


def _split_overrides(
    layers: list[Layer], requested: list[Override]
) -> tuple[dict[str, Choice], list[Override]]:
    """Apply group choices (``provider=x``) ourselves; keep key overrides for Hydra."""
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
    for group in GROUPS:
        if group not in choices:
            raise ConfigError(f"no option chosen for group {group}", source="packaged defaults")
        choice = choices[group]
        if option_file(layers, group, choice.option) is None:
            options = available_options(layers, group)
            raise ConfigError(
                f'unknown option "{choice.option}"{did_you_mean(choice.option, options)}; '
                f"available: {one_of(options)}",
                source=choice.origin,
                key=group,
            )
    return choices, keys


def _hydra_compose(
    layers: list[Layer],
    choices: dict[str, Choice],
    key_overrides: list[Override],
    secrets: Secrets,
    sources: Sources,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    search = ",".join(quote(f"file://{d}") for d in group_dirs(layers) if d.is_dir())
    hydra_overrides = [f"hydra.searchpath=[{search}]"] + [o.text for o in key_overrides]
    defaults: list[Any] = [{g: choices[g].option} for g in GROUPS]
    defaults += [f"{_LAYER_GROUP}/l{i}" for i in range(len(layers))] + ["_self_"]
    with _HYDRA_LOCK:
        GlobalHydra.instance().clear()
        store = ConfigStore.instance()
        try:
            for i, layer in enumerate(layers):
                _store_layer(store, f"l{i}", layer)
            store.store(name=_PRIMARY, node={"defaults": defaults})
            with initialize(version_base="1.3", config_path=None):
                cfg = compose(_PRIMARY, overrides=hydra_overrides)
            raw = OmegaConf.to_container(cfg, resolve=False)
            _register_secret_resolver(lambda name: secrets.get(name))
            resolved = _resolve(cfg, sources)
            _register_secret_resolver(
                lambda name: REDACTED if secrets.get(name) else f"<unset: {name}>"
            )
            display = _resolve(cfg, sources)
        except (HydraException, ValueError) as exc:  # Hydra rejects some overrides with ValueError
            raise _hydra_error(exc, key_overrides) from exc
        except OmegaConfBaseException as exc:  # e.g. a malformed ${...} an override brings in
            key = str(getattr(exc, "full_key", "") or "")
            raise ConfigError(_first_line(exc), source=sources.who_set(key) if key else None,
                              key=key or None) from exc
        finally:
            store.repo.pop(_LAYER_GROUP, None)
            store.repo.pop(f"{_PRIMARY}.yaml", None)
            GlobalHydra.instance().clear()
    assert isinstance(raw, dict)
    return cast(dict[str, Any], raw), resolved, display


def _store_layer(store: ConfigStore, name: str, layer: Layer) -> None:
    try:
        store.store(group=_LAYER_GROUP, name=name, package="_global_",
                    node=copy.deepcopy(layer.body))
    except OmegaConfBaseException as exc:  # e.g. a malformed interpolation such as ${}
        key = str(getattr(exc, "full_key", "") or "")
        raise ConfigError(_first_line(exc), source=layer.where, key=key or None) from exc


def _first_line(exc: OmegaConfBaseException) -> str:
    return str(getattr(exc, "msg", exc)).strip().splitlines()[0]


def _register_secret_resolver(resolver: Any) -> None:
    OmegaConf.register_new_resolver("secret", resolver, replace=True, use_cache=False)


def _resolve(cfg: Any, sources: Sources) -> dict[str, Any]:
    try:
        data = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as exc:
        key = str(getattr(exc, "full_key", "") or "")
        where = sources.who_set(key) if key else None
        if type(exc).__name__ == "MissingMandatoryValue":
            raise ConfigError(f"missing value — set it with `hermes config set {key} VALUE`",
                              source=where, key=key) from exc
        message = str(getattr(exc, "msg", exc)).strip().splitlines()[0]
        raise ConfigError(message, source=where, key=key) from exc
    assert isinstance(data, dict)
    return cast(dict[str, Any], data)


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


def _validation_error(exc: ValidationError, sources: Sources) -> ConfigError:
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"]]
    key = ".".join(loc)
    more = exc.error_count() - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if first["type"] == "extra_forbidden":
        parent = HermesConfig.model_fields
        model: Any = HermesConfig
        for part in loc[:-1]:
            field = model.model_fields.get(part) if hasattr(model, "model_fields") else None
            annotation = getattr(field, "annotation", None)
            model = annotation if hasattr(annotation, "model_fields") else None
            if model is None:
                break
        parent = getattr(model, "model_fields", {}) if model is not None else {}
        hint = did_you_mean(loc[-1], parent)
        return ConfigError(f"unknown key{hint}{suffix}", source=sources.who_set(key), key=key)
    if first["type"] == "missing":
        return ConfigError(f"missing value{suffix}", source=sources.who_set(key) or "config",
                           key=key)
    got = first.get("input")
    shown = REDACTED if is_secret_key(key) else repr(got)
    return ConfigError(f"{first['msg'].lower()}, got {shown}{suffix}",
                       source=sources.who_set(key), key=key)
