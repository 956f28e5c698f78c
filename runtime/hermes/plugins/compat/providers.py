"""hermes-agent's ``providers`` (and ``providers.base``): model provider profiles. Hermes'
providers are config options (``conf/provider/``) or ``ctx.register_model_provider``; a
``ProviderProfile`` is refused naming it."""

from __future__ import annotations

from hermes.plugins.compat.names import unsupported

__getattr__ = unsupported("providers")
