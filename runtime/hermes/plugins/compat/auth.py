"""hermes-agent's ``hermes_cli.auth``: the logins hermes-agent keeps for OAuth services.

Hermes keeps none of them, so a plugin asking is told it is not logged in:
``get_auth_status`` answers ``logged_in: False`` (a plugin's tools checked on it stay
hidden) and ``resolve_*`` credential look-ups raise ``AuthError`` saying so."""

from __future__ import annotations

from typing import Any, NoReturn

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("hermes_cli.auth")
NO_LOGIN = "hermes-runtime keeps no hermes-agent login for {provider}"


class AuthError(RuntimeError):
    """A login is missing or unusable (hermes-agent's fields)."""

    def __init__(self, message: str, *, provider: str = "", code: str | None = None,
                 relogin_required: bool = False) -> None:
        super().__init__(message)
        self.provider = provider
        self.code = code
        self.relogin_required = relogin_required


def get_auth_status(provider_id: str | None = None) -> dict[str, Any]:
    """Never logged in (see the module docstring)."""
    provider = provider_id or ""
    return {"logged_in": False, "provider": provider,
            "error": NO_LOGIN.format(provider=provider or "any provider")}


def get_provider_auth_state(provider_id: str) -> None:
    """No stored login state."""
    return None


def _no_login(provider: str) -> NoReturn:
    raise AuthError(NO_LOGIN.format(provider=provider), provider=provider,
                    code="not_logged_in", relogin_required=True)


def resolve_spotify_runtime_credentials(*args: Any, **kwargs: Any) -> NoReturn:
    _no_login("spotify")


def resolve_nous_access_token(*args: Any, **kwargs: Any) -> NoReturn:
    _no_login("nous")
