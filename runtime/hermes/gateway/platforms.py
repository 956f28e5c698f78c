"""Messaging platforms the gateway connects, declared by the ``platforms`` group.

Adapters arrive with the gateway issue; until then only ``platforms=none`` is
shipped, and naming an adapter that does not exist is a clear error.
"""

from __future__ import annotations

from hermes.config.schema import PlatformsConfig
from hermes.errors import ConfigError, one_of


def available_adapters() -> dict[str, type]:
    """Adapter classes by kind, looked up when a runtime is built (none yet)."""
    return {}


def build_platforms(settings: PlatformsConfig) -> list[object]:
    adapters = available_adapters()
    built = []
    for name, platform in settings.enabled.items():
        adapter = adapters.get(platform.kind)
        if adapter is None:
            raise ConfigError(f'no adapter for platform kind "{platform.kind}"; '
                              f"available: {one_of(adapters)}", key=f"platforms.enabled.{name}")
        built.append(adapter(platform))
    return built
