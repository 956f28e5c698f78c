"""What a conversation needs before anything starts, checked in one place.

Every front door opens its runtime through ``hermes.container.open_runtime``, which asks
here first: a provider that needs a key and has none is refused with one line saying how
to set it, before a session, a sandbox or a server exists. (An endpoint that does not
answer is found by the first model call, which fails the turn with one line; the
session it opened is discarded by ``Conversation.end``.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes.credentials import secret_hint
from hermes.errors import UserError
from hermes.hints import command


class MissingKey(UserError):
    """The provider needs an API key and the profile has none."""


def missing_api_key(config: Any, raw: Mapping[str, Any] | None = None) -> str | None:
    """The name of the secret the provider needs but does not have, else None.
    ``raw``: the composed values before interpolation, to name the secret referenced."""
    provider = config.provider
    if not provider.requires_key or provider.api_key:
        return None
    ref = str(((raw or {}).get("provider") or {}).get("api_key") or "")
    return ref[len("${secret:"):-1] if ref.startswith("${secret:") else "PROVIDER_API_KEY"


def require_key(config: Any, raw: Mapping[str, Any] | None, profile: str | None,
                env_file: Any) -> None:
    """Refuse (``MissingKey``) when the provider needs a key the profile lacks."""
    problem = key_problem(config, raw, profile, env_file)
    if problem is not None:
        raise MissingKey(problem)


def key_problem(config: Any, raw: Mapping[str, Any] | None, profile: str | None,
                env_file: Any) -> str | None:
    """The line refusing a conversation when the provider needs a key the profile lacks
    (how to set it), else None."""
    missing = missing_api_key(config, raw)
    if missing is None:
        return None
    name = config.provider.name
    files = config.secrets.environment_files
    if files:  # the deployment's: `config set` would only write a stale .env
        return (f"no API key for provider {name}: {secret_hint(missing, files)} "
                f"(the profile's secrets.environment_files), or export {missing}")
    return (f"no API key for provider {name}: set it with "
            f"`{command(profile, f'config set {missing} YOUR_KEY')}` (stored in "
            f"{env_file}, mode 0600) or export {missing}; or pick another provider, "
            f"e.g. `{command(profile, 'chat provider=ollama')}`")
