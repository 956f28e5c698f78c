"""The ``hermes`` command: global options, command groups, entry point."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from hermes import __version__
from hermes.cli.app import CliState, new_app

PROFILE_FLAGS = ("-p", "--profile")

app = new_app(
    "Hermes: a declarative, config-driven AI agent runtime.\n\n"
    "\b\nGlobal option, accepted anywhere on the command line:\n"
    "  -p, --profile NAME   run with that profile's home\n"
    "  -z TEXT              one-shot: same as `hermes chat -q TEXT`"
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hermes {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Hermes: a declarative, config-driven AI agent runtime."""


def _register() -> None:
    from hermes.cli import (
        chat_cmd,
        config_cmd,
        doctor_cmd,
        profile_cmd,
        prompt_cmd,
        sessions_cmd,
    )

    app.command("chat")(chat_cmd.chat)
    app.add_typer(profile_cmd.app, name="profile")
    app.add_typer(config_cmd.app, name="config")
    app.add_typer(sessions_cmd.app, name="sessions")
    app.add_typer(prompt_cmd.app, name="prompt")
    app.command("doctor")(doctor_cmd.doctor)


_register()


def split_profile_flag(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """Take ``-p NAME`` / ``--profile NAME`` / ``--profile=NAME`` from anywhere before ``--``."""
    profile: str | None = None
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            rest += args[i:]
            break
        if token in PROFILE_FLAGS:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                sys.stderr.write(f"error: {token} needs a profile name\n")
                raise SystemExit(2)
            profile = args[i + 1]
            i += 2
            continue
        if token.startswith("--profile="):
            profile = token.split("=", 1)[1]
        else:
            rest.append(token)
        i += 1
    return profile, rest


def expand_oneshot(args: list[str]) -> list[str]:
    """``hermes -z TEXT [...]`` is ``hermes chat -q TEXT [...]``."""
    if args[:1] == ["-z"]:
        if len(args) < 2:
            sys.stderr.write("error: -z needs the question to ask\n")
            raise SystemExit(2)
        return ["chat", "-q", args[1], *args[2:]]
    return args


def run(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    profile, rest = split_profile_flag(sys.argv[1:] if argv is None else argv)
    app(args=expand_oneshot(rest), prog_name="hermes", obj=CliState(profile))
