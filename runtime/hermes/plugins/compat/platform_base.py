"""hermes-agent's ``gateway.platforms.base``. Its adapter base (``BasePlatformAdapter``,
``MessageEvent``, ``SendResult``, ...) has no counterpart here: a Hermes platform is a
``hermes.gateway.messaging`` adapter registered with ``ctx.register_platform``. Each name
imported is refused naming it, so a hermes-agent platform plugin is refused in one line."""

from __future__ import annotations

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("gateway.platforms.base")
