"""Messaging platforms the gateway connects, declared by the ``platforms`` group.

``platforms.enabled.<name>.kind`` picks the adapter; the kinds and the schema of each
one's ``settings`` are declared in ``hermes.config.platform_schema`` (checked when the
config is composed), their adapters here. A platform that cannot start is reported as
failed; the profile's other platforms still start.
"""

from __future__ import annotations

import importlib
from typing import Any

from hermes.config.platform_schema import PLATFORM_ADAPTERS
from hermes.config.schema import PlatformsConfig
from hermes.errors import HermesError
from hermes.gateway.base import PlatformAdapter, PlatformState

ADAPTERS = {"api_server": "hermes.gateway.api_server.platform:ApiServerPlatform",
            "webhook": "hermes.gateway.webhook.platform:WebhookPlatform",
            "telegram": "hermes.gateway.telegram.platform:TelegramPlatform",
            "matrix": "hermes.gateway.matrix.platform:MatrixPlatform",
            "email": "hermes.gateway.email.platform:EmailPlatform", **PLATFORM_ADAPTERS}
"""The adapter class of each platform kind, imported only by the gateway that runs it (the
newer kinds name theirs in ``hermes.config.platform_kinds``)."""


def build_adapters(settings: PlatformsConfig, service: Any, listeners: Any,
                   failed: dict[str, PlatformState]) -> list[tuple[str, PlatformAdapter]]:
    """Adapters for ``service``'s profile; a platform that cannot be built goes to ``failed``."""
    built: list[tuple[str, PlatformAdapter]] = []
    for name, platform in settings.enabled.items():
        try:
            built.append((name, _adapter(platform.kind, service, name)(
                name, platform, service, listeners)))
        except HermesError as exc:
            failed[name] = PlatformState("failed", str(exc))
    return built


def _adapter(kind: str, service: Any, name: str) -> Any:
    """The adapter class (or a plugin's factory, for ``plugin:NAME``) of ``kind``."""
    if kind.startswith("plugin:"):
        from hermes.plugins.wiring import plugin_factory

        return plugin_factory(service.runtime.container.plugins, "platforms", kind,
                              f"platforms.enabled.{name}.kind")
    module, _, attribute = ADAPTERS[kind].partition(":")
    return getattr(importlib.import_module(module), attribute)
