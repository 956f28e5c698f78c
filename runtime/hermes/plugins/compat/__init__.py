"""hermes-agent's plugin-facing modules, offered to plugins only.

hermes-agent's plugins import its own modules: ``hermes_constants``, ``tools.registry``,
``agent.memory_provider``, ``agent.context_engine``, ``gateway.platforms.base``,
``providers``, ``hermes_cli.auth``, and their own package as ``plugins.<name>.*``. Each
plugin module (its package and every submodule) is given builtins of its own whose
``__import__`` answers those names with this package's modules, mapped onto Hermes' own
(``importer.PluginImporter``). Nothing is installed under those top-level names:
``sys.modules`` never holds ``tools`` or ``agent``, no finder is added to
``sys.meta_path``, and code outside plugins imports as before. The answer holds at import
and at every later call into the plugin (an import inside a function), and each plugin
sees its own runtime's home (``hermes_constants.get_hermes_home``).

A hermes-agent name with no equivalent here raises ``ImportError`` naming it — "hermes-agent's
gateway.config is not supported by hermes-runtime" — so the plugin is refused with that
one line.
"""

from hermes.plugins.compat.importer import PluginImporter, plugin_builtins

__all__ = ["PluginImporter", "plugin_builtins"]
