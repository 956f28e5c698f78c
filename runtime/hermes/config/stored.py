"""A composed config kept as a file (an experiment's arm), validated again to run it.

The file holds the composed values with interpolations unresolved (``${secret:X}``),
so it reproduces the run exactly without recomposing any layer, and holds no secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hermes.config.placeholders import check_placeholders
from hermes.config.resolve import resolve
from hermes.config.schema import HermesConfig
from hermes.config.sources import Source, Sources
from hermes.credentials import Secrets
from hermes.errors import ConfigError


def dump_stored(raw: Mapping[str, Any]) -> str:
    """``raw`` as YAML text, keys in composition order (stable, byte for byte)."""
    return yaml.safe_dump(dict(raw), sort_keys=False, allow_unicode=True)


def load_stored(path: Path, env_file: Path, environ: Mapping[str, str]) -> HermesConfig:
    """Validate the config stored in ``path``, resolving secrets from ``env_file`` and
    ``environ``. Raises ``ConfigError`` naming the file and key."""
    from hermes.config.compose import _validation_error

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the stored config: {exc}", source=str(path)) from exc
    if not isinstance(raw, dict):
        raise ConfigError("expected a mapping", source=str(path))
    sources = Sources([Source(str(path), raw)], {})
    secrets = Secrets.for_config(env_file, environ, raw.get("secrets"))
    resolved, _display = resolve(raw, secrets, sources)
    check_placeholders(raw, resolved, sources, env_file)
    try:
        return HermesConfig.model_validate(resolved)
    except ValidationError as exc:
        raise _validation_error(exc, sources) from exc
