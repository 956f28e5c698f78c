"""The typed ``settings`` of each messaging platform kind, checked when a config is composed.

A platform kind is declared once per table: ``PLATFORM_SETTINGS`` maps the kind
(``platforms.enabled.<name>.kind``) to the schema its ``settings`` must fit, and
``hermes.gateway.platforms.ADAPTERS`` maps the same kind to its adapter. A new
platform (webhook, telegram, ...) adds a ``PlatformSettings`` subclass here and one
entry in each table; ``hermes config set``, ``config validate``, ``doctor`` and the
gateway then all refuse its bad settings the same way.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError, PydanticKnownError

from hermes.config.sections import NonBlank, Section
from hermes.errors import did_you_mean, one_of


def _refuse_booleans(error: Literal["int_type", "float_type"]) -> Any:
    """YAML reads ``yes``/``true`` as booleans, which pydantic would take as 1."""

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise PydanticKnownError(error)
        return value
    return BeforeValidator(check)


Integer = Annotated[int, _refuse_booleans("int_type")]
Number = Annotated[float, _refuse_booleans("float_type")]


class PlatformSettings(Section):
    """The settings every platform kind extends: an unknown key is refused with the
    closest known name and the list of them."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = list(cls.model_fields)
        unknown = [InitErrorDetails(type=PydanticCustomError(
            "unknown_name", "unknown key{hint}; known: {known}",
            {"hint": did_you_mean(str(key), known), "known": one_of(known)}),
            loc=(str(key),), input=value) for key, value in data.items() if key not in known]
        if unknown:
            raise ValidationError.from_exception_data(cls.__name__, unknown)
        return data


class ApiServerSettings(PlatformSettings):
    """``kind: api_server``: the OpenAI-compatible HTTP API."""

    host: NonBlank = "127.0.0.1"
    """Address to listen on; beyond loopback the profile needs a key of 16+ characters
    (``API_SERVER_KEY`` in its ``.env``)."""
    port: Annotated[Integer, Field(ge=0, le=65535)] = 8642
    """TCP port (0: any free port, shown by ``hermes gateway status``)."""
    max_concurrency: Annotated[Integer, Field(ge=1)] = 8
    """Turns the profile runs at once; a request past them is answered 429."""
    max_body_bytes: Annotated[Integer, Field(ge=1)] = 4 * 1024 * 1024
    """Largest request body, counted as it arrives (chunked bodies too); past it 413."""
    read_timeout: Annotated[Number, Field(gt=0)] = 30.0
    """Seconds a request body may stall before the connection is cut (408)."""


PLATFORM_SETTINGS: dict[str, type[PlatformSettings]] = {"api_server": ApiServerSettings}
"""The schema of ``settings`` for each platform kind."""


def check_kind(kind: str) -> str:
    """``kind`` if a platform kind of that name is declared, else a did-you-mean error."""
    if kind not in PLATFORM_SETTINGS:
        raise PydanticCustomError("unknown_name", 'no platform kind "{kind}"{hint}; '
                                  "available: {known}", {
                                      "kind": kind, "hint": did_you_mean(kind, PLATFORM_SETTINGS),
                                      "known": one_of(PLATFORM_SETTINGS)})
    return kind


def typed_settings(kind: str | None, value: Any) -> PlatformSettings:
    """``value`` validated against the settings schema of ``kind`` (an unknown kind's own
    error is reported instead, so its settings are not checked)."""
    model = PLATFORM_SETTINGS.get(kind or "")
    if model is None:
        return PlatformSettings()
    return model.model_validate(value)
