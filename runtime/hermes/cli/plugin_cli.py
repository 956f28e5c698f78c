"""``hermes <name> ...`` for CLI commands that enabled plugins register.

The root command group asks here for names it does not know. The home's plugin index
(``hermes.plugins.index``) says which plugin registered which command, so nothing is
imported until a plugin's command runs, and then only that plugin. A name missing
from the index makes the enabled plugins load once (and be indexed again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand

from hermes.errors import HermesError, PluginError


def is_indexed(st: Any, name: str) -> bool:
    """Whether a plugin recorded CLI command ``name`` in this home's index (a cheap read:
    then no built-in command module needs importing)."""
    from hermes.plugins.index import indexed_command

    try:
        return indexed_command(st.home(), name) is not None
    except HermesError:
        return False


def plugin_commands(st: Any) -> dict[str, str]:
    """``{name: help}`` of the enabled plugins' CLI commands (for ``hermes --help``)."""
    found = _index_and_settings(st)
    if found is None:
        return {}
    index, settings = found
    commands = index.get("commands", {})
    return {name: str(entry.get("help") or "") for name, entry in sorted(commands.items())
            if isinstance(entry, dict) and settings.is_enabled(str(entry.get("plugin")))}


def plugin_command(st: Any, name: str) -> TyperCommand | None:
    """The command running plugin command ``name``; None if no enabled plugin has one."""
    help_text = plugin_commands(st).get(name)
    if help_text is None and _reindexed(st):
        help_text = plugin_commands(st).get(name)
    if help_text is None:
        return None

    def run() -> None:
        from typer._click.globals import get_current_context  # typer's own click

        raise typer.Exit(run_plugin_command(st, name, list(get_current_context().args)))

    return TyperCommand(name, callback=run, help=help_text, add_help_option=False,
                        context_settings={"ignore_unknown_options": True,
                                          "allow_extra_args": True})


def run_plugin_command(st: Any, name: str, args: list[str]) -> int:
    """Import the plugin that registered ``name`` (that one alone) and run it."""
    from hermes.plugins.commands import run_cli_command
    from hermes.plugins.index import indexed_command

    home = st.home()
    entry = indexed_command(home, name)
    host = _host(st, home)
    key = str(entry["plugin"]) if entry else ""
    command = host.load_single(key).cli_commands.get(name)
    if command is None:
        raise PluginError(f"plugin {key or '?'} no longer registers `hermes {name}`; see "
                          f"`hermes plugins info {key}`")
    return run_cli_command(command, args)


def _index_and_settings(st: Any) -> tuple[dict[str, Any], Any] | None:
    from hermes.plugins.index import read_index
    from hermes.plugins.settings import layered_plugin_settings

    try:
        home = st.home()
        index = read_index(home)
        if not index.get("commands"):
            return None
        return index, layered_plugin_settings(home, st.environ)
    except HermesError:  # a broken profile or config: the built-in commands say so
        return None


def _reindexed(st: Any) -> bool:
    """Load the enabled plugins (which records them in the index); False when none is
    enabled, or the profile cannot be read."""
    from hermes.plugins.settings import layered_plugin_settings

    try:
        home = st.home()
        settings = layered_plugin_settings(home, st.environ)
    except HermesError:
        return False
    if not settings.enabled:
        return False
    _host(st, home, settings).registrations()
    return True


def _host(st: Any, home: Any, settings: Any = None) -> Any:
    from hermes.plugins.host import PluginHost
    from hermes.plugins.settings import layered_plugin_settings, layered_secrets

    settings = settings or layered_plugin_settings(home, st.environ)
    return PluginHost(home, settings, environ=st.environ,
                      getenv=layered_secrets(home, st.environ).get, cwd=Path.cwd())
