"""Drift rows of ``hermes doctor``: profile values over read-only system layers, and
``.env`` secrets shadowed by (or shadowing) the environment. Names only: a secret's
value is never shown."""

from __future__ import annotations

from collections.abc import Mapping

from hermes.config.drift import Shadow, layered_secrets, shadowed_secrets, shadows
from hermes.credentials import Secrets
from hermes.doctor.base import Check
from hermes.errors import ConfigError
from hermes.home import Home


def check_drift(home: Home, environ: Mapping[str, str], overrides: list[str]) -> list[Check]:
    """The ``config drift`` row (with system layers only) and the ``secrets`` row."""
    try:
        found, layered = shadows(home, environ)
    except ConfigError:
        return []  # the config row names the problem
    rows = [_config_drift(found)] if layered else []
    secrets = _secrets(home, environ, overrides)
    if secrets.dotenv or secrets.origin or secrets.unreadable:
        rows.append(_secrets_row(secrets))
    return rows


def _config_drift(found: list[Shadow]) -> Check:
    if not found:
        return Check("config drift", "ok", "no profile value shadows a system layer")
    detail = ", ".join(f"{s.key} ({s.system.label}, {s.system.file})" for s in found)
    fix = "; ".join(f"hermes config unset {key}" for key in dict.fromkeys(s.key for s in found))
    return Check("config drift", "warn", f"the profile overrides the read-only system layer: "
                 f"{detail}", f"{fix} (or keep them on purpose)")


def _secrets(home: Home, environ: Mapping[str, str], overrides: list[str]) -> Secrets:
    """The secrets as the runtime sees them; from the layers alone if it cannot compose."""
    from hermes.config import compose_config

    try:
        section = compose_config(home, environ, overrides).config.secrets.model_dump()
    except ConfigError:
        return layered_secrets(home, environ)
    return Secrets.for_config(home.env_file, environ, section)


def _secrets_row(secrets: Secrets) -> Check:
    if secrets.unreadable:
        files = ", ".join(map(str, secrets.unreadable))
        return Check("secrets", "warn", f"cannot read {files} (secrets.environment_files)",
                     "run as the file's owner (the service user), or fix the path")
    lines = shadowed_secrets(secrets)
    if not lines:
        return Check("secrets", "ok", "no secret in .env is also set by the environment")
    names = [line.split()[0] for line in lines]
    unused = secrets.precedence == "environment"
    fix = "; ".join(f"hermes config unset {name}" for name in names)
    return Check("secrets", "warn", "; ".join(lines),
                 f"{fix} ({'the .env copy is unused' if unused else 'to use the environment'})")
