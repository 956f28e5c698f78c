"""Compose one profile's config from its layers and overrides, then validate it.

The flow: read the layers (YAML), decide the group choices, record every
source (provenance), then either take the composed config from the cache or
compose it with Hydra (``hydra_backend``, imported only on a miss), resolve
interpolations (``resolve``), and validate against the schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from hermes.config.cache import ComposeCache, cache_key
from hermes.config.layers import (
    Layer,
    available_options,
    layer_choices,
    load_layers,
    option_file,
)
from hermes.config.overrides import Override, cli_overrides, env_overrides, quick_split
from hermes.config.placeholders import check_placeholders
from hermes.config.resolve import resolve
from hermes.config.schema import GROUPS, HermesConfig
from hermes.config.sources import Choice, Sources, build_sources, override_source
from hermes.config.toolset_names import normalise_toolsets
from hermes.credentials import REDACTED, Secrets, is_secret_key, redact_tree
from hermes.errors import ConfigError, did_you_mean
from hermes.home import Home


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
    hydra_in_child: bool = False,
) -> ComposedConfig:
    """Compose ``home``'s config from every layer plus overrides, and validate it.

    ``profile_text`` stands in for the profile's ``config.yaml`` (to check an
    edit before writing it; never cached). ``hydra_in_child``: a cache miss is
    composed in a forked child, so a long-lived caller (the gateway) never loads
    Hydra. Raises ``ConfigError`` (one line naming the file and key) on any problem.
    """
    layers = load_layers(home, environ, profile_text=profile_text)
    requested = normalise_toolsets(env_overrides(environ) + cli_overrides(list(overrides)),
                                   lambda: available_options(layers, "toolsets"))
    cache = ComposeCache(home, environ) if profile_text is None else None
    raw, sources, key = _from_cache(cache, layers, requested)
    hit = raw is not None
    if raw is None and hydra_in_child:
        from hermes.config.isolated import call_in_child

        raw, sources, key = call_in_child(_compose_with_hydra, layers, requested)
    elif raw is None:
        raw, sources, key = _compose_with_hydra(layers, requested)
    assert sources is not None
    secrets = Secrets.for_config(home.env_file, environ, raw.get("secrets"))
    resolved, display = resolve(raw, secrets, sources)
    check_placeholders(raw, resolved, sources, home.env_file)
    try:
        config = HermesConfig.model_validate(resolved)
    except ValidationError as exc:
        raise _validation_error(exc, sources) from exc
    if cache is not None and key is not None and not hit and not _literal_secrets(requested):
        cache.put(key, raw)
    # Literal secrets written into a file (``api_key: sk-...``) are redacted too.
    return ComposedConfig(home, config, redact_tree(raw), redact_tree(display), sources)


def _literal_secrets(requested: list[Override]) -> bool:
    """Whether an override gives a secret's value itself (``provider.api_key=sk-...``):
    such a composition is not cached, so the secret is never written to the home."""
    return any(redact_tree(source.data) != source.data
               for source in map(override_source, requested))


def _compose_with_hydra(layers: list[Layer], requested: list[Override]
                        ) -> tuple[dict[str, Any], Sources, str]:
    """A cache miss: Hydra composes (``hydra_backend`` is the only module importing it)."""
    from hermes.config.hydra_backend import hydra_compose, split_overrides

    choices, key_overrides = split_overrides(layers, requested)
    sources = build_sources(layers, choices, key_overrides)
    return hydra_compose(layers, choices, key_overrides, sources), sources, cache_key(sources)


def _from_cache(
    cache: ComposeCache | None, layers: list[Layer], requested: list[Override]
) -> tuple[dict[str, Any] | None, Sources | None, str | None]:
    """``(raw, sources, key)`` on a hit; ``(None, None, None)`` when Hydra must run."""
    split = quick_split(requested, GROUPS) if cache is not None else None
    if cache is None or split is None:
        return None, None, None
    picked, key_overrides = split
    choices = {g: Choice(o, layer.where) for g, (o, layer) in layer_choices(layers).items()}
    choices |= {g: Choice(option, origin) for g, (option, origin) in picked.items()}
    for group in GROUPS:
        path = option_file(layers, group, choices[group].option) if group in choices else None
        if path is None or "defaults" in path.read_text(encoding="utf-8"):
            return None, None, None  # errors and nested defaults lists go through Hydra
    sources = build_sources(layers, choices, key_overrides)
    key = cache_key(sources)
    raw = cache.get(key)
    return (raw, sources, key) if raw is not None else (None, None, None)


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
    if first["type"] == "blank":
        where = sources.who_set(key) or "config"
        fix = (f"give it a value: {key}=VALUE" if where.startswith(("command line", "environment"))
               else f"set it with `hermes config set {key} VALUE`")
        return ConfigError(f"empty value{suffix} — {fix}", source=where, key=key)
    if first["type"] in ("unknown_name", "as_written"):  # a message that needs no "got ..."
        return ConfigError(f"{first['msg']}{suffix}", source=sources.who_set(key), key=key)
    hint = " — give a list: [a, b] (or a,b with `hermes config set`)" \
        if first["type"] == "list_type" else ""
    got = first.get("input")
    shown = REDACTED if is_secret_key(key) else repr(got)
    return ConfigError(f"{first['msg'].lower()}, got {shown}{suffix}{hint}",
                       source=sources.who_set(key), key=key)
