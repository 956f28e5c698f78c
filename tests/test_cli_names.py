"""The one table of ``hermes`` command names (``hermes.cli_names``) is the CLI's: the
commands the app has, the ones ``hermes --help`` lists, the ones hints give the profile
flag, the ones the warm server answers, the ones no plugin may take."""

from __future__ import annotations

from pathlib import Path

import typer

import hermes.cli
from hermes import entry, hints
from hermes.cli.main import build_app
from hermes.cli_names import COMMANDS, RESERVED
from plugin_support import make_runtime, write_plugin

CLAIMS = """\
def register(ctx):
    for name in ("sessions", "version", "mine"):
        ctx.register_cli_command(name, help="claims " + name, handler_fn=lambda args: 0)
"""


def test_the_table_is_the_cli_s_command_list() -> None:
    group = typer.main.get_command(build_app())
    assert sorted(group.commands) == sorted(COMMANDS)  # type: ignore[attr-defined]
    modules = {p.stem for p in Path(hermes.cli.__file__).parent.glob("*_cmd.py")}
    assert modules == {c.module for c in COMMANDS.values()}, \
        "a command module is not in hermes/cli_names.py (or the table names a missing one)"


def test_hermes_help_lists_the_table(hermes_subprocess) -> None:
    shown = hermes_subprocess("--help").stdout.split("Commands:\n", 1)[1]
    assert [line.split()[0] for line in shown.splitlines() if line.strip()] == \
        sorted(COMMANDS, key=lambda n: (COMMANDS[n].group, list(COMMANDS).index(n)))


def test_hints_and_the_console_script_read_the_table() -> None:
    assert set(hints.PROFILE_COMMANDS) == {"-z", *COMMANDS} - {"profile"}
    assert entry.DAEMON_COMMANDS == ("-z", "chat")
    assert hints.for_profile("then `hermes pairing list`", "demo") == \
        "then `hermes -p demo pairing list`"


def test_a_plugin_may_not_take_a_command_name(root: Path, environ: dict[str, str],
                                              capsys) -> None:
    write_plugin(root, "claims", CLAIMS)
    with make_runtime(root, environ, None, "plugins.enabled=[claims]",
                      provider=False) as runtime:
        taken = runtime.container.plugins().registrations().cli_commands
        warnings = [line for line in capsys.readouterr().err.splitlines() if "claims" in line]
    assert sorted(taken) == ["mine"] and "version" in RESERVED
    assert warnings == [
        "warning: plugin claims: `hermes sessions` is taken; its command is ignored",
        "warning: plugin claims: `hermes version` is taken; its command is ignored"]
