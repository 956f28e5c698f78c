"""``hermes config ...``: show, explain and edit the composed config."""

from __future__ import annotations

import sys
from typing import Any

import typer

from hermes.cli.app import new_app, out, state
from hermes.credentials import REDACTED, is_secret_key
from hermes.hints import command, for_profile

app = new_app("Show, explain and change config. Edits touch only the profile's config.yaml "
              "(secrets go to .env).")

OVERRIDES_HELP = ("Hydra overrides for this run: key=value, +key=value, ~key, group=option "
                  "(e.g. provider=anthropic provider.model=claude-sonnet-4-5).")


def _compose(ctx: typer.Context, overrides: list[str] | None = None) -> Any:
    from hermes.config import compose_config

    st = state(ctx)
    return compose_config(st.home(), st.environ, overrides or [])


def _dump(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


@app.command()
def show(
    ctx: typer.Context,
    overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
    resolved: bool = typer.Option(False, "--resolved", help="Resolve interpolations "
                                  "(secrets stay redacted)."),
) -> None:
    """Print the composed config of the current profile."""
    composed = _compose(ctx, overrides)
    typer.echo(_dump(composed.display if resolved else composed.raw), nl=False)


@app.command()
def get(ctx: typer.Context, key: str = typer.Argument(..., help="Dotted key, e.g. provider.model."),
        overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP)) -> None:
    """Print one resolved value (secrets redacted)."""
    from hermes.config.explain import shown_value

    value = shown_value(_compose(ctx, overrides), key)
    if isinstance(value, dict | list | bool) or value is None:  # YAML spelling: true, null
        out(_dump(value).rstrip("\n").removesuffix("\n...").rstrip("\n"))
    else:
        out(str(value))


@app.command("set", context_settings={"ignore_unknown_options": True})
def set_(ctx: typer.Context,
         key: str = typer.Argument(..., help="Dotted key, a group name (provider), or a "
                                   "secret name (OPENAI_API_KEY)."),
         value: str = typer.Argument(..., help="Value, parsed as YAML (3, -5, true, [a, b]); "
                                     "list keys also take a,b."),
         force: bool = typer.Option(False, "--force", help="Set KEY even where a read-only "
                                    "system layer (or, for a secret, an environment that wins "
                                    "over .env) sets it.")) -> None:
    """Set KEY in the profile's config.yaml, keeping comments; secrets go to .env (0600).
    Refused where a read-only system layer sets KEY, unless --force."""
    from hermes.config.edit import set_value

    st = state(ctx)
    home = st.home()
    edit = set_value(home, key, value, st.environ, force=force)
    shown = REDACTED if edit.where.endswith(".env") or is_secret_key(key) else value
    out(f"{key} = {shown}  ({edit.where})")
    _notes(edit.notes, home.name)
    _note_missing(home, st.environ)


def _notes(notes: list[str], profile: str) -> None:
    for note in notes:
        sys.stderr.write(for_profile(note, profile) + "\n")


def _note_missing(home: Any, environ: dict[str, str]) -> None:
    from hermes.config.edit import missing_values

    for missing in missing_values(home, environ):
        sys.stderr.write(f"note: {missing} is still unset; set it with "
                         f"`{command(home.name, f'config set {missing} VALUE')}`\n")


@app.command()
def unset(ctx: typer.Context, key: str = typer.Argument(...)) -> None:
    """Remove KEY from the profile's config.yaml (or .env), falling back to lower layers."""
    from hermes.config.edit import unset_value

    st = state(ctx)
    home = st.home()
    edit = unset_value(home, key, st.environ)
    out(f"unset {key}  ({edit.where})")
    _notes(edit.notes, home.name)
    _note_missing(home, st.environ)


@app.command()
def explain(ctx: typer.Context, key: str = typer.Argument(...),
            overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP)) -> None:
    """Say which layer and file set KEY, and what it overrode."""
    from hermes.config.explain import explain_key

    found = explain_key(_compose(ctx, overrides), key)
    if found.group:
        out(f"{key} = {found.value}")
        out(f"  chosen by: {found.set_by}")
        return
    out(f"{key} = {_dump(found.value).strip().removesuffix('...').strip()}")
    if found.set_by is None:
        out("  set by: schema default (no config file sets it)")
        return
    out(f"  set by: {found.set_by}")
    for earlier, old in found.overrode:
        out(f"  overrode: {old!r} from {earlier}")


@app.command()
def path(ctx: typer.Context) -> None:
    """Print the path of the profile's config.yaml."""
    out(str(state(ctx).home().config_file))


@app.command()
def validate(ctx: typer.Context,
             overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP)) -> None:
    """Compose and validate the config; exit code 2 with the problem if invalid."""
    from hermes.config.dotenv_edit import env_file_notes

    composed = _compose(ctx, overrides)
    out(f"ok: {composed.home.config_file} (provider {composed.config.provider.name}, "
        f"model {composed.config.provider.model})")
    _notes(env_file_notes(composed.home.env_file), composed.home.name)


@app.command()
def edit(ctx: typer.Context) -> None:
    """Open config.yaml in $VISUAL or $EDITOR; the file is replaced only if the result is valid
    (at a terminal, a failed check offers to re-open the editor)."""
    from hermes.cli.config_editor import edit_config

    st = state(ctx)
    out(edit_config(st.home(), st.environ))
