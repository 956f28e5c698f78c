"""The ``hermes`` command: global options, command groups, entry point."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Sequence

import typer

from hermes import __version__
from hermes.argv import split_profile_flag
from hermes.cli.app import CliState, new_app
from hermes.cli_names import COMMANDS

HELP = (
    "Hermes: a declarative, config-driven AI agent runtime.\n\n"
    "\b\nGlobal option, accepted anywhere on the command line:\n"
    "  -p, --profile NAME   run with that profile's home\n"
    "  -z TEXT              one-shot: same as `hermes chat -q TEXT` (-z - reads stdin)"
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hermes {__version__}")
        raise typer.Exit()


def _main(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Hermes: a declarative, config-driven AI agent runtime."""


def _indexed(state: CliState, command: str) -> bool:
    """Whether ``command`` is a plugin's, recorded in the home's index (imported here, not
    at the top: a built-in command never needs it)."""
    from hermes.cli.plugin_cli import is_indexed

    return is_indexed(state, command)


def build_app(command: str | None = None, *, builtins: bool = True) -> typer.Typer:
    """The CLI. Given the command being run, only that command's module is imported
    (start-up time); otherwise (help, typos) every command is registered, unless
    ``builtins`` is False (a plugin's command: the root group finds it)."""
    import importlib

    app = new_app(HELP)
    app.callback()(_main)
    names = [command] if command in COMMANDS else list(COMMANDS) if builtins else []
    for name in names:
        entry = COMMANDS[name]
        target = getattr(importlib.import_module(f"hermes.cli.{entry.module}"), entry.attribute)
        if entry.group:
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)
    return app


def first_command(args: Sequence[str]) -> str | None:
    """The command word of ``args`` (``None`` for help, the version, or nothing)."""
    return next((a for a in args if not a.startswith("-")), None)


def expand_oneshot(args: list[str]) -> list[str]:
    """``hermes -z TEXT [...]`` is ``hermes chat -q TEXT [...]`` (as ``chat -z``, so that
    errors name the flag the user typed). ``hermes -z --help`` is chat's help."""
    if args[:1] == ["-z"]:
        if args[1:2] in (["-h"], ["--help"]):
            return ["chat", *args[1:]]
        if len(args) < 2:
            sys.stderr.write("error: -z needs the question to ask\n")
            raise SystemExit(2)
        return ["chat", "-z", args[1], *args[2:]]
    return args


def run(argv: Sequence[str] | None = None,
        background: list[Callable[[], None]] | None = None) -> None:
    """Console-script entry point. ``background`` collects work to run after the exit
    status is reported (``CliState.background``; the warm server's child passes it)."""
    profile, rest = split_profile_flag(sys.argv[1:] if argv is None else argv)
    args = expand_oneshot(rest)
    if args in (["--version"], ["-V"]):  # no command modules needed
        sys.stdout.write(f"hermes {__version__}\n")
        return
    command = first_command(args)
    state = CliState(profile, background=background)
    plugin = command is not None and command not in COMMANDS and _indexed(state, command)
    try:
        build_app(command, builtins=not plugin)(args=args, prog_name="hermes", obj=state)
    finally:
        # Nothing is left to collect that matters; skip the collector's final sweep
        # over every object (litellm's alone take about a second to walk at exit).
        gc.freeze()
