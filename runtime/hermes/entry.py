"""The ``hermes`` console script: hand chat commands to the warm server, or run here.

``hermes -z ...`` and ``hermes chat ...`` go to the profile's server (started on
first use, ``runtime.daemon: auto``); ``--no-daemon``, ``HERMES_NO_DAEMON=1`` or
``runtime.daemon: off`` run them in this process, as does any failure to reach a
server (``-v`` says so). Everything else runs here. Nothing heavy is imported
before that choice.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

DAEMON_COMMANDS = ("-z", "chat")


def run(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while args[:1] in (["-v"], ["--verbose"]):
        verbose, args = True, args[1:]
    no_daemon = "--no-daemon" in _before_dashes(args)
    args = [a for i, a in enumerate(args)
            if not (a == "--no-daemon" and "--" not in args[:i])]
    if not no_daemon and _is_chat(args):
        from hermes.daemon.client import run_remote

        code = run_remote(args, os.environ, verbose, interactive=_is_interactive(args))
        if code is not None:
            sys.stdout.flush()
            raise SystemExit(code)
    from hermes.cli.main import run as run_here

    run_here(args)


def _is_chat(args: list[str]) -> bool:
    from hermes.cli.argv import MissingProfileName, parse_profile_flag

    try:
        rest = parse_profile_flag(args)[1]
    except MissingProfileName:  # reported by the in-process run
        return False
    return bool(rest) and rest[0] in DAEMON_COMMANDS


def _is_interactive(args: list[str]) -> bool:
    """Interactive chat at a terminal (not ``-z``, not ``chat -q``)."""
    from hermes.cli.argv import parse_profile_flag

    rest = _before_dashes(parse_profile_flag(args)[1])
    asks_once = any(a in ("-q", "--query") or a.startswith("--query=") for a in rest)
    return rest[0] == "chat" and not asks_once and sys.stdin.isatty()


def _before_dashes(args: list[str]) -> list[str]:
    return args[:args.index("--")] if "--" in args else args
