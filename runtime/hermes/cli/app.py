"""Shared CLI plumbing: the Typer group class, per-invocation state, output helpers."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import typer

# typer 0.27 (pinned) carries its own copy of click; its usage errors are these.
from typer._click.exceptions import NoArgsIsHelpError, UsageError
from typer.core import TyperGroup

from hermes.errors import HermesError, UserError, disk_full
from hermes.hints import for_profile
from hermes.home import Home, default_root, resolve_home


class HermesGroup(TyperGroup):
    """Prints user errors as one line (exit code 2) instead of a traceback, and usage
    errors (an unknown option or command, a bad value) as one line instead of Click's
    usage block. Typer already suggests the closest command for a typo. At the top
    level, names it does not know may be enabled plugins' commands (``plugin_cli``).
    """

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and ctx.parent is None:
            from hermes.cli.plugin_cli import plugin_command

            command = plugin_command(state(ctx), cmd_name)
        return command

    def list_commands(self, ctx: Any) -> list[str]:
        names = list(super().list_commands(ctx))
        if ctx.parent is None:
            from hermes.cli.plugin_cli import plugin_commands

            names += [name for name in plugin_commands(state(ctx)) if name not in names]
        return names

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except NoArgsIsHelpError:
            raise  # a bare group shows its help
        except UsageError as exc:  # the top-level options: no context yet
            _usage_error(exc)
            raise typer.Exit(exc.exit_code) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            with refused_at_end_of_input("nothing was changed"):  # any prompt of a command
                return super().invoke(ctx)
        except HermesError as exc:
            if os.environ.get("HERMES_FULL_ERROR") == "1":
                raise
            _report(ctx, exc)
        except NoArgsIsHelpError:
            raise
        except UsageError as exc:  # a subcommand's arguments, or an unknown subcommand
            _usage_error(exc)
            ctx.exit(exc.exit_code)
        except Exception as exc:  # a full disk, wherever a write found it: one line
            full = disk_full(exc)
            if full is None or os.environ.get("HERMES_FULL_ERROR") == "1":
                raise
            _report(ctx, full)


def _report(ctx: Any, exc: HermesError) -> None:
    """``error: MESSAGE`` on one line, and the error's exit code."""
    sys.stderr.write(f"error: {for_profile(str(exc), state(ctx).hint_profile())}\n")
    ctx.exit(exc.exit_code)


def _usage_error(exc: UsageError) -> None:
    """``error: MESSAGE (see `hermes CMD -h`)`` on one line."""
    where = exc.ctx.command_path if exc.ctx is not None else "hermes"
    message = " ".join(exc.format_message().split())
    sys.stderr.write(f"error: {message} (see `{where} -h`)\n")


@contextmanager
def refused_at_end_of_input(refusal: str) -> Iterator[None]:
    """A prompt at the end of input has nobody to answer it: the command is refused
    (``UserError``: one line, exit code 2) instead of Click's ``Aborted!``; ``refusal``
    says what did not happen. Ctrl-C stays an interruption."""
    try:
        yield
    except typer.Abort as exc:
        if not isinstance(exc.__context__, EOFError):
            raise
        raise UserError(f"no answer (end of input); {refusal} — answer at a terminal, "
                        "or pass --yes") from None


def ask(question: str, *, refusal: str) -> str:
    """One line typed by the user (empty by default); see ``refused_at_end_of_input``."""
    with refused_at_end_of_input(refusal):
        return str(typer.prompt(question, default="", show_default=False))


def confirm(question: str, *, refusal: str) -> bool:
    """Yes or no (no by default); see ``refused_at_end_of_input``."""
    with refused_at_end_of_input(refusal):
        return bool(typer.confirm(question, default=False))


def new_app(help_text: str) -> typer.Typer:
    return typer.Typer(cls=HermesGroup, help=help_text, no_args_is_help=True,
                       add_completion=False, rich_markup_mode=None,
                       context_settings={"help_option_names": ["-h", "--help"]})


@dataclass
class CliState:
    """What one invocation knows before any command runs."""

    profile: str | None
    """The ``-p/--profile`` value, taken from anywhere on the command line."""
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    background: list[Callable[[], None]] | None = None
    """Work a command leaves to run after its exit status is reported: the warm server's
    child runs it once the client is released (a chat's running learning review). None
    (in-process): the command finishes its work itself."""

    def home(self) -> Home:
        return resolve_home(self.profile, self.environ)

    def hint_profile(self) -> str | None:
        """The profile hints name: this invocation's home's, or the ``-p`` value when
        that does not resolve (a profile that does not exist)."""
        try:
            return self.home().name
        except HermesError:
            return self.profile

    def manager(self) -> Any:
        from hermes.profiles.manager import ProfileManager

        return ProfileManager(default_root(self.environ), self.environ)


def state(ctx: typer.Context) -> CliState:
    obj = ctx.find_root().obj
    if not isinstance(obj, CliState):  # invoked without run(), e.g. a bare CliRunner
        obj = ctx.find_root().obj = CliState(None)
    return obj


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def console() -> Any:
    """A rich console; when output is piped, wide enough that table rows never wrap (240
    columns cut a doctor row naming two files under a long home with "…"): each row is one
    line, its columns as wide as their widest cell."""
    from rich.console import Console

    return Console(soft_wrap=True, width=None if sys.stdout.isatty() else 4096)
