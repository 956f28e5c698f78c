"""``hermes doctor``: check the home and its files, dependencies, config, credentials,
and what the config uses (the provider endpoint, docker or ssh)."""

from __future__ import annotations

import typer

from hermes.cli.app import console, state
from hermes.hints import for_profile


def doctor(
    ctx: typer.Context,
    overrides: list[str] | None = typer.Argument(None, help="Hydra overrides to check with."),
    offline: bool = typer.Option(False, "--offline",
                                 help="Skip the network checks (provider endpoint, ssh host)."),
) -> None:
    """Check the current profile and print a table of problems with fixes."""
    from rich.table import Table

    from hermes.doctor import run_checks

    st = state(ctx)
    home = st.home()
    checks = run_checks(home, st.environ, overrides or [], offline=offline)
    table = Table(title=f"hermes doctor: profile {home.name} ({home.path})", box=None)
    for column in ("STATUS", "CHECK", "DETAIL", "FIX"):
        table.add_column(column)
    styles = {"ok": "green", "warn": "yellow", "fail": "red"}
    for check in checks:
        table.add_row(f"[{styles[check.status]}]{check.status}[/]", check.name,
                      for_profile(check.detail, home.name), for_profile(check.fix, home.name))
    console().print(table)
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)
