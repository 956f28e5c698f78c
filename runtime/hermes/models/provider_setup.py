"""``hermes setup``: pick a provider, check its key with one cheap call, then store both.

Everything is checked before anything is written: the choice composes and validates with
the profile (``plan``), the endpoint takes the key (``check``); only then ``apply`` writes
the provider choice (and model, base URL) to ``config.yaml`` and the key to ``.env``
(0600), through the same editor as ``hermes config set``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes.config.schema import ProviderConfig
from hermes.errors import UserError
from hermes.home import Home


@dataclass(frozen=True)
class Choice:
    """What the user picked (flags or answers); None: keep the option's or profile's."""

    provider: str
    key: str | None = None
    model: str | None = None
    base_url: str | None = None


@dataclass(frozen=True)
class Plan:
    """A validated choice: the provider settings to check and what to write."""

    choice: Choice
    settings: ProviderConfig
    """The composed provider settings, with the new key in them."""
    key_name: str | None
    """The ``.env`` name the option reads its key from (``${secret:NAME}``), if any."""


def provider_options(home: Home, environ: Mapping[str, str]) -> list[str]:
    """The provider options this profile can pick (packaged, system and its own)."""
    from hermes.config.layers import available_options, load_layers

    return available_options(load_layers(home, environ), "provider")


def overrides(choice: Choice) -> list[str]:
    """The choice as command-line overrides (what ``apply`` will write)."""
    found = [f"provider={choice.provider}"]
    if choice.model:
        found.append(f"provider.model={_quoted(choice.model)}")
    if choice.base_url:
        found.append(f"provider.api_base={_quoted(choice.base_url)}")
    return found


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def key_name(raw: Mapping[str, Any]) -> str | None:
    """``NAME`` of the provider's ``api_key: ${secret:NAME}``, else None."""
    ref = str((raw.get("provider") or {}).get("api_key") or "")
    return ref[len("${secret:"):-1] if ref.startswith("${secret:") else None


def plan(home: Home, environ: Mapping[str, str], choice: Choice) -> Plan:
    """Compose and validate the profile with ``choice``; ``UserError`` (one line) when it
    does not hold, or when the provider needs a key and none is given or stored."""
    from hermes.config import compose_config

    _check_text(choice)
    composed = compose_config(home, environ, overrides(choice))
    settings = composed.config.provider
    name = key_name(composed.raw)
    if choice.key is not None and name is None:
        raise UserError(f"provider {choice.provider} takes no API key (api_key is not a "
                        "${secret:NAME} reference); leave out the key")
    if choice.key is not None and name is not None:
        from hermes.config.drift import refuse_environment_secret

        refuse_environment_secret(home, environ, name)
        settings = settings.model_copy(update={"api_key": choice.key})
    if settings.requires_key and not settings.api_key:
        raise UserError(f"provider {choice.provider} needs {name or 'an API key'}: pass it "
                        "with --key-stdin (or --key)")
    return Plan(choice, settings, name)


def _check_text(choice: Choice) -> None:
    for flag, value in (("--key", choice.key), ("--model", choice.model),
                        ("--base-url", choice.base_url)):
        if value is not None and (not value.strip() or any(c in value for c in "\r\n\0")):
            raise UserError(f"hermes setup: {flag}: expected one non-empty line")
    if choice.key is not None and choice.key != choice.key.strip():
        raise UserError("hermes setup: --key: leading or trailing spaces (paste the key alone)")


def check(plan: Plan) -> str:
    """One cheap call with the new settings; what it proved. ``UserError`` if refused."""
    from hermes.models.catalog import check_access
    from hermes.models.errors import ModelCallError

    try:
        return check_access(plan.settings)
    except ModelCallError as exc:
        raise UserError(f"provider {plan.choice.provider}: the check failed, nothing was "
                        f"written: {exc} (--no-check skips it)") from exc


def apply(home: Home, environ: Mapping[str, str], plan: Plan) -> list[str]:
    """Write the choice: provider option, model and base URL to ``config.yaml``, the key
    to ``.env`` (0600). Notes from the editor."""
    from hermes.config.edit import set_value

    choice = plan.choice
    notes = list(set_value(home, "provider", choice.provider, environ).notes)
    if choice.base_url:
        notes += set_value(home, "provider.api_base", choice.base_url, environ).notes
    if choice.model:
        notes += set_value(home, "provider.model", choice.model, environ).notes
    if choice.key is not None and plan.key_name:
        notes += set_value(home, plan.key_name, choice.key, environ).notes
    return notes
