"""``.cache/plugins.json``: what the home's plugins registered when last loaded.

``hermes`` must start without importing any plugin, yet ``hermes --help`` lists the
enabled plugins' CLI commands and ``hermes <name> ...`` runs one. So every load of the
plugins (a chat, the gateway, ``hermes plugins enable``) records here which CLI
commands each plugin registered, and how each plugin fared; the CLI reads this file
and imports a plugin only to run its command. A command missing from the index
makes the CLI load the enabled plugins once and record them again.
"""

from __future__ import annotations

import json
from typing import Any

from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

INDEX_FILE = "plugins.json"
VERSION = 1


def index_path(home: Home) -> Any:
    return home.path / ".cache" / INDEX_FILE


def read_index(home: Home) -> dict[str, Any]:
    """The recorded index; empty when missing or unreadable (it is only a cache)."""
    try:
        data = json.loads(index_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("version") == VERSION else {}


def write_index(home: Home, registrations: Any) -> None:
    """Record ``registrations`` (a ``Registrations``); written only when it changed."""
    commands = {name: {"plugin": command.plugin, "help": command.help}
                for name, command in registrations.cli_commands.items()}
    states = {state.key: {"status": state.status, "detail": state.detail,
                          "unsupported": state.record.unsupported if state.record else []}
              for state in registrations.states}
    data = {"version": VERSION, "commands": commands, "plugins": states}
    if read_index(home) == data:
        return
    try:
        private_dir(index_path(home).parent)
        atomic_write(index_path(home), json.dumps(data, indent=1), mode=0o600)
    except OSError:  # a read-only home: the CLI then loads plugins to find commands
        pass


def indexed_command(home: Home, name: str) -> dict[str, Any] | None:
    """``{"plugin": KEY, "help": TEXT}`` of CLI command ``name``, if recorded."""
    entry = read_index(home).get("commands", {}).get(name)
    return entry if isinstance(entry, dict) and isinstance(entry.get("plugin"), str) else None
