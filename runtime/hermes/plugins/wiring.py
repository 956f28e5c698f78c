"""Where plugins' registrations meet the container's services.

Config names a plugin's provider as ``plugin:NAME`` — ``provider.provider``,
``environment.kind``, ``memory.providers``, a platform's ``kind`` — so the built-in
choices keep their typo checks and a plugin's is explicit. Plugins load only when
such a name (or the tools, hooks or commands) is asked for. ``host`` is a callable
returning the runtime's ``PluginHost`` (the container's provider), called late.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes.errors import ConfigError, one_of

if TYPE_CHECKING:
    from hermes.plugins.host import PluginHost

PREFIX = "plugin:"
HostRef = Callable[[], "PluginHost"]
KINDS = {"model_providers": "model provider", "environments": "environment",
         "memory_providers": "memory provider", "platforms": "platform"}


def plugin_name(value: str) -> str | None:
    """``NAME`` of a ``plugin:NAME`` choice, else None."""
    return value[len(PREFIX):] if value.startswith(PREFIX) else None


def selector_key(value: str) -> str:
    """The container's selector key for a config choice: ``plugin`` for a plugin's."""
    return "plugin" if value.startswith(PREFIX) else value


def plugin_factory(host: HostRef, attribute: str, value: str, key: str) -> Callable[..., Any]:
    """The factory an enabled plugin registered for ``plugin:NAME``, else a
    ``ConfigError`` naming ``key`` and what is registered."""
    name = plugin_name(value) or value
    registered: Mapping[str, Callable[..., Any]] = host().registrations().collected(attribute)
    if name not in registered:
        raise ConfigError(f"no enabled plugin registers the {KINDS[attribute]} {name!r} "
                          f"(registered: {one_of(registered)}); enable the plugin that "
                          "provides it: `hermes plugins list`", key=key)
    return registered[name]


def lazy(host: HostRef, attribute: str) -> Callable[[], Mapping[str, Any]]:
    """A callable giving the plugins' ``attribute`` registrations, loading them then."""
    return lambda: host().registrations().collected(attribute)


def model_client(settings: Any, host: HostRef) -> Any:
    """The runtime's model client: litellm, or a plugin's (``plugin:NAME``)."""
    if plugin_name(settings.provider) is None:
        from hermes.models.litellm_client import LiteLLMClient

        return LiteLLMClient(settings=settings)
    return plugin_factory(host, "model_providers", settings.provider,
                          "provider.provider")(settings)


def plugin_environment(home: Any, settings: Any, environ: Mapping[str, str],
                       host: HostRef) -> Any:
    """The environment a plugin registered for ``environment.kind: plugin:NAME``."""
    factory = plugin_factory(host, "environments", settings.kind, "environment.kind")
    return factory(home, settings, environ)


def plugin_toolsets(host: PluginHost) -> list[Any]:
    return host.registrations().toolsets()


def plugin_events(host: PluginHost, shell_hooks: Any = None) -> Any:
    """The runtime's event bus: the plugins' callbacks, then the shell hooks'."""
    events = host.registrations().events
    if shell_hooks is not None:
        shell_hooks.register_into(events)
    return events


def plugin_skills(host: HostRef) -> Callable[[], Mapping[str, Any]]:
    return lazy(host, "skills")
