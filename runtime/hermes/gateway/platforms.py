"""Messaging platforms the gateway connects, declared by the ``platforms`` group.

``platforms.enabled.<name>.kind`` picks the adapter. Built-in kinds: ``api_server``
(an OpenAI-compatible HTTP API). A platform whose settings are wrong is reported
as failed; the profile's other platforms still start.
"""

from __future__ import annotations

from typing import Any

from hermes.config.schema import PlatformsConfig
from hermes.errors import ConfigError, HermesError, one_of
from hermes.gateway.base import PlatformAdapter, PlatformState

KINDS = ("api_server",)


def check_platforms(settings: PlatformsConfig) -> None:
    """Refuse unknown adapter kinds (part of validating a runtime's config)."""
    for name, platform in settings.enabled.items():
        if platform.kind not in KINDS:
            raise ConfigError(f'no adapter for platform kind "{platform.kind}"; '
                              f"available: {one_of(KINDS)}", key=f"platforms.enabled.{name}")


def build_platforms(settings: PlatformsConfig) -> list[str]:
    """The names of the platforms a runtime would serve (checked; started by the gateway)."""
    check_platforms(settings)
    return list(settings.enabled)


def build_adapters(settings: PlatformsConfig, service: Any, listeners: Any,
                   failed: dict[str, PlatformState]) -> list[tuple[str, PlatformAdapter]]:
    """Adapters for ``service``'s profile; a platform that cannot be built goes to ``failed``."""
    from hermes.gateway.api_server.platform import ApiServerPlatform

    built: list[tuple[str, PlatformAdapter]] = []
    for name, platform in settings.enabled.items():
        try:
            check_platforms(PlatformsConfig(name=settings.name, enabled={name: platform}))
            built.append((name, ApiServerPlatform(name, platform, service, listeners)))
        except HermesError as exc:
            failed[name] = PlatformState("failed", str(exc))
    return built
