"""Plugins' CLI commands: running ``hermes <name> ...``.

A plugin's CLI command is an argparse tree, as in hermes-agent: ``setup(parser)``
adds its arguments and sub-parsers, and the handler (``set_defaults(func=...)``, else
the registered ``handler_fn``) gets the parsed namespace. Slash commands run through
``PluginHost.run_command``.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Sequence
from typing import Any

from hermes.plugins.registrations import CliCommand


def run_cli_command(command: CliCommand, args: Sequence[str]) -> int:
    """Parse ``args`` with the plugin's parser and run its handler; the exit code."""
    parser = argparse.ArgumentParser(prog=f"hermes {command.name}",
                                     description=command.description or command.help)
    if command.setup is not None:
        command.setup(parser)
    try:
        namespace = parser.parse_args(list(args))
    except SystemExit as exc:  # argparse printed usage or help
        return int(exc.code or 0)
    handler = getattr(namespace, "func", None) or command.handler
    if handler is None:
        parser.print_help()
        return 0
    result: Any = handler(namespace)
    if inspect.iscoroutine(result):
        import asyncio

        result = asyncio.run(result)
    return result if isinstance(result, int) and not isinstance(result, bool) else 0
