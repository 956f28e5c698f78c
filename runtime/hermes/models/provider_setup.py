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
    profile_text: str
    """The profile's new ``config.yaml``."""


def provider_options(home: Home, environ: Mapping[str, str]) -> list[str]:
    """The provider options this profile can pick (packaged, system and its own)."""
    from hermes.config.layers import available_options, load_layers

    return available_options(load_layers(home, environ), "provider")


OPTION_KEYS = ("provider", "model", "api_base", "api_key", "api_mode", "requires_key")
"""The profile's ``provider.*`` keys that belong to the option it picked: dropped when
setup picks another option (the old endpoint's URL would else follow the new one)."""


def profile_text(home: Home, environ: Mapping[str, str], choice: Choice) -> str:
    """The profile's ``config.yaml`` with ``choice`` made (comments kept)."""
    from hermes.config.edit import (
        dump_roundtrip,
        load_roundtrip,
        set_choice,
        set_path,
        unset_path,
    )
    from hermes.config.group_switch import current_option

    try:
        text = home.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    doc = load_roundtrip(text, source=str(home.config_file))
    if current_option(home, environ, "provider") != choice.provider:
        for key in OPTION_KEYS:
            unset_path(doc, ["provider", key])
    set_choice(doc, "provider", choice.provider)
    for key, value in (("model", choice.model), ("api_base", choice.base_url)):
        if value:
            set_path(doc, ["provider", key], value)
    return str(dump_roundtrip(doc))


def key_name(raw: Mapping[str, Any]) -> str | None:
    """``NAME`` of the provider's ``api_key: ${secret:NAME}``, else None."""
    ref = str((raw.get("provider") or {}).get("api_key") or "")
    return ref[len("${secret:"):-1] if ref.startswith("${secret:") else None


_FLAGS = {"provider.api_base": "--base-url URL", "provider.model": "--model NAME"}
"""The flag giving a value an option leaves unset (``???``: custom, azure)."""


def plan(home: Home, environ: Mapping[str, str], choice: Choice) -> Plan:
    """Compose and validate the profile with ``choice``; ``UserError`` (one line) when it
    does not hold, or when the provider needs a key and none is given or stored."""
    from hermes.config import compose_config
    from hermes.errors import MissingValueError

    _check_text(choice)
    _refuse_system_values(home, environ, choice)
    text = profile_text(home, environ, choice)
    try:
        composed = compose_config(home, environ, profile_text=text)
    except MissingValueError as exc:
        flag = _FLAGS.get(exc.key or "")
        if flag is None:
            raise
        raise UserError(f"provider {choice.provider} needs {exc.key}: pass {flag}") from exc
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
    return Plan(choice, settings, name, text)


def _refuse_system_values(home: Home, environ: Mapping[str, str], choice: Choice) -> None:
    """As ``hermes config set``: a read-only system layer's choice is changed there."""
    from hermes.config.drift import refuse_system_value

    refuse_system_value(home, environ, "provider")
    for key, value in (("provider.model", choice.model), ("provider.api_base",
                                                          choice.base_url)):
        if value:
            refuse_system_value(home, environ, key)


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


def apply(home: Home, plan: Plan) -> None:
    """Write the choice: the profile's ``config.yaml`` (provider option, model, base URL)
    and the key to ``.env`` (0600)."""
    from hermes.config.dotenv_edit import set_secret
    from hermes.fsutil import atomic_write, private_dir

    private_dir(home.path)
    atomic_write(home.config_file, plan.profile_text, mode=0o600)
    if plan.choice.key is not None and plan.key_name:
        set_secret(home.env_file, plan.key_name, plan.choice.key)
