"""``hermes profile ...``: manage profiles (isolated homes)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from hermes.cli.app import ask, console, new_app, out, state
from hermes.errors import ProfileError
from hermes.hints import command

if TYPE_CHECKING:
    from hermes.profiles.manager import Outcome

app = new_app("Manage profiles: isolated homes with their own config, secrets, memory and "
              "sessions.")


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """List profiles; the active one is marked with *."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for column in ("", "PROFILE", "PROVIDER", "MODEL", "DESCRIPTION"):
        table.add_column(column)
    for info in state(ctx).manager().infos():
        table.add_row("*" if info.active else "", info.name, info.provider, info.model,
                      info.description)
    console().print(table)


@app.command()
def create(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="New profile name: lower-case letters, digits, - and _."),
    source: str | None = typer.Option(None, "--from", help="Example (coder, researcher, ops) "
                                      "or existing profile to start from."),
    clone: bool = typer.Option(False, "--clone", help="Copy config, .env, SOUL.md, skills and "
                               "memories from --from (or the active profile)."),
    clone_all: bool = typer.Option(False, "--clone-all", help="Copy everything except history "
                                   "(sessions, cron, logs, backups)."),
    description: str = typer.Option("", "--description", "-d", help="One line about it."),
) -> None:
    """Create a profile. Without --clone, --from an existing profile extends it."""
    if clone and clone_all:
        raise ProfileError("--clone and --clone-all are exclusive; pick one")
    manager = state(ctx).manager()
    home = manager.create(name, source=source, clone=clone, clone_all=clone_all,
                          description=description)
    out(f"created profile {name} at {home.path}")
    for dependant in manager.dependants(name)[0]:  # e.g. left behind by `delete --force`
        sys.stderr.write(f"note: {dependant.profile} extends {name}: it now builds on this "
                         "new profile\n")
    out(f"use it with `hermes -p {name} ...` or make it the default: "
        f"`hermes profile switch {name}`")


@app.command()
def switch(ctx: typer.Context, name: str = typer.Argument(..., help="Profile, or 'default'.")
           ) -> None:
    """Make NAME the active profile in every shell; `switch default` clears it."""
    home = state(ctx).manager().switch(name)
    out(f"active profile: {name} ({home.path})")


app.command("use", help="Alias of `switch`.")(switch)


@app.command()
def show(ctx: typer.Context, name: str | None = typer.Argument(
        None, help="Profile to show; the current one by default.")) -> None:
    """Show a profile's path, provider, model and contents."""
    from hermes.credentials import read_env_file
    from hermes.skills.discovery import skill_dirs

    st = state(ctx)
    manager = st.manager()
    info = manager.info(name or st.home().name)
    home = manager.home(info.name)
    secrets = read_env_file(home.env_file)
    rows = [("profile", info.name + (" (active)" if info.active else "")),
            ("path", str(info.path)),
            ("provider", info.provider), ("model", info.model),
            ("description", info.description or "-"),
            ("secrets", ", ".join(sorted(secrets)) or "none (values never shown)"),
            ("skills", str(sum(1 for _ in skill_dirs(home.skills_dir)))),
            ("sessions db", "yes" if home.sessions_db.exists() else "not yet")]
    for key, value in rows:
        out(f"{key:12} {value}")


@app.command()
def delete(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Profile to delete."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    force: bool = typer.Option(False, "--force", help="Delete it even though other profiles "
                               "extend it (they stop loading until their extends: changes)."),
) -> None:
    """Delete a profile and everything in it. Asks you to type the name unless -y.
    Refuses while other profiles extend it, unless --force."""
    manager = state(ctx).manager()
    home = manager.home(name)
    if not force:
        manager.check_not_extended(name)
    if not yes:
        typed = ask(f"This deletes {home.path} and all its data. Type the profile name to "
                    "confirm", refusal="nothing deleted")
        if typed != name:
            raise ProfileError("confirmation did not match; nothing deleted")
    outcome = manager.delete(name, force=force)
    _report(outcome)
    out(f"deleted profile {name}")


@app.command()
def rename(ctx: typer.Context, old: str = typer.Argument(...), new: str = typer.Argument(...)
           ) -> None:
    """Rename a profile. The active marker, the `extends:` of profiles that extend it
    and its alias scripts follow; if any of that fails, nothing changes."""
    outcome = state(ctx).manager().rename(old, new)
    out(f"renamed {old} -> {new} ({outcome.home.path})")
    _report(outcome)


@app.command()
def export(
    ctx: typer.Context,
    name: str = typer.Argument(...),
    output: Path | None = typer.Option(None, "--output", "-o",
                                       help="Archive to write; NAME.tar.gz by default."),
) -> None:
    """Export a profile as tar.gz, without .env and with secrets redacted."""
    path = state(ctx).manager().export(name, output or Path(f"{name}.tar.gz"))
    out(f"exported {name} to {path} (.env not included)")


@app.command("import")
def import_(
    ctx: typer.Context,
    archive: Path = typer.Argument(..., help="An archive made by `hermes profile export`."),
    name: str | None = typer.Option(None, "--name", help="Profile name; the archive's by default."),
) -> None:
    """Import an exported profile. Refuses to overwrite an existing one. Secrets were
    not exported: `<redacted>` placeholders are removed and the secrets to set are named."""
    from hermes.profiles.archive import secrets_to_set

    st = state(ctx)
    outcome = st.manager().import_(archive, name)
    home = outcome.home
    out(f"imported profile {home.name} at {home.path}")
    _report(outcome)
    needed = secrets_to_set(home, st.environ)
    if needed is None:
        out(f"check it with `{command(home.name, 'doctor')}`")
    for secret in needed or []:
        out(f"set its secret: `{command(home.name, f'config set {secret} …')}`")


@app.command()
def alias(
    ctx: typer.Context,
    name: str = typer.Argument(...),
    bin_dir: Path | None = typer.Option(None, "--bin-dir",
                                        help="Wrapper directory; ~/.local/bin by default."),
    alias_name: str | None = typer.Option(None, "--as", help="Wrapper name; NAME by default."),
) -> None:
    """Write a wrapper script so that `NAME chat` runs `hermes -p NAME chat`."""
    st = state(ctx)
    target = bin_dir or Path(st.environ.get("HOME") or Path.home()) / ".local" / "bin"
    script = st.manager().alias(name, target, alias_name)
    out(f"wrote {script}")


@app.command()
def path(ctx: typer.Context, name: str | None = typer.Argument(None)) -> None:
    """Print a profile's home directory (the current one by default)."""
    st = state(ctx)
    out(str(st.manager().home(name).path if name else st.home().path))


def _report(outcome: Outcome) -> None:
    for line in outcome.done:
        out(line)
    for line in outcome.warnings:
        sys.stderr.write(line + "\n")
