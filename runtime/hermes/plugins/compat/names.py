"""Which hermes-agent module names a plugin may import, and what answers each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HERMES_AGENT_TOP_LEVEL = frozenset({
    "acp_adapter", "agent", "batch_runner", "cli", "cron", "gateway", "hermes_bootstrap",
    "hermes_cli", "hermes_constants", "hermes_logging", "hermes_state", "hermes_time",
    "mcp_serve", "model_tools", "plugins", "providers", "run_agent", "tools",
    "toolset_distributions", "toolsets", "trajectory_compressor", "tui_gateway", "utils",
})
"""hermes-agent 0.19.0's top-level modules (its wheel's ``top_level.txt``): in a plugin,
these names mean hermes-agent's, answered here or refused naming what is missing."""

OFFERED = {
    "hermes_constants": "hermes.plugins.compat.constants",
    "tools.registry": "hermes.plugins.compat.tool_results",
    "agent.memory_provider": "hermes.plugins.compat.memory_provider",
    "agent.context_engine": "hermes.plugins.compat.context_engine",
    "agent.web_search_provider": "hermes.plugins.compat.web_search_provider",
    "gateway.platforms.base": "hermes.plugins.compat.platform_base",
    "providers": "hermes.plugins.compat.providers",
    "providers.base": "hermes.plugins.compat.providers",
    "hermes_cli.auth": "hermes.plugins.compat.auth",
    "hermes_cli.config": "hermes.plugins.compat.config",
    "hermes_state": "hermes.plugins.compat.state",
}
"""hermes-agent module -> the module of this package that stands in for it. A module
with a ``bind(home)`` function is copied per plugin, with what ``bind`` returns (names
that depend on the plugin's home)."""

PACKAGES = frozenset({"agent", "gateway", "gateway.platforms", "hermes_cli", "plugins", "tools"})
"""hermes-agent packages given as empty shells holding the offered modules."""

UNSUPPORTED = "hermes-agent's {name} is not supported by hermes-runtime"


def unsupported(module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` refusing every other name of hermes-agent's ``module``
    (one line naming it; dunder probes get the usual ``AttributeError``)."""
    def missing(attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise ImportError(UNSUPPORTED.format(name=f"{module}.{attribute}"), name=module)

    return missing
