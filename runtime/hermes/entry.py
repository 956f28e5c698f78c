"""The ``hermes`` console script: hand chat commands to the warm server, or run here.

``hermes -z ...`` and ``hermes chat ...`` go to the profile's server (started on
first use, ``runtime.daemon: auto``); ``--no-daemon``, ``HERMES_NO_DAEMON=1`` or
``runtime.daemon: off`` run them in this process, as does any failure to reach a
server (``-v`` says so). Everything else runs here, help included (``-h`` or
``--help`` anywhere: help never needs a runtime). Nothing heavy is imported before
that choice.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from hermes.cli_names import warm_commands

DAEMON_COMMANDS = warm_commands()
HELP_FLAGS = ("-h", "--help")


def run(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while args[:1] in (["-v"], ["--verbose"]):
        verbose, args = True, args[1:]
    no_daemon = "--no-daemon" in _before_dashes(args)
    args = [a for i, a in enumerate(args)
            if not (a == "--no-daemon" and "--" not in args[:i])]
    chat = None if no_daemon else _chat_args(args)
    if chat is not None:
        from hermes.daemon.client import run_remote

        code = run_remote(args, os.environ, verbose, interactive=_is_interactive(chat))
        if code is not None:
            sys.stdout.flush()
            raise SystemExit(code)
    from hermes.cli.main import run as run_here

    run_here(args)


def _chat_args(args: list[str]) -> list[str] | None:
    """The arguments after the profile flag when they are a chat command (``-z``,
    ``chat``) the warm server may answer; else None."""
    from hermes.argv import MissingProfileName, parse_profile_flag

    try:
        rest = parse_profile_flag(args)[1]
    except MissingProfileName:  # reported by the in-process run
        return None
    if any(a in HELP_FLAGS for a in _before_dashes(rest)):
        return None  # printed here: no server is started (or woken) for help
    return rest if rest and rest[0] in DAEMON_COMMANDS else None


def _is_interactive(chat: list[str]) -> bool:
    """Interactive chat at a terminal (not ``-z``, not ``chat -q``)."""
    words = _before_dashes(chat)
    asks_once = any(a in ("-q", "--query") or a.startswith("--query=") for a in words)
    return words[0] == "chat" and not asks_once and sys.stdin.isatty()


def _before_dashes(args: list[str]) -> list[str]:
    return args[:args.index("--")] if "--" in args else args
