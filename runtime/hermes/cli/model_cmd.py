"""``hermes model``: list the provider's models; ``hermes model [set] NAME`` picks one."""

from __future__ import annotations

import sys
from typing import Any

import typer

from hermes.cli.app import out, state
from hermes.errors import UserError


def model(
    ctx: typer.Context,
    words: list[str] | None = typer.Argument(
        None, metavar="[set] [NAME]", help="A model to set as the profile's provider.model; "
        "none: list the provider's models."),
) -> None:
    """List the models of the profile's provider (its endpoint's /models, else litellm's
    offline map; * marks the current one), or set NAME in the profile's config.yaml."""
    args = list(words or [])
    if args[:1] == ["set"]:
        args = args[1:]
        if not args:
            raise UserError("hermes model set: which model? e.g. `hermes model set gpt-4o`")
    if len(args) > 1:
        raise UserError(f"hermes model: one model name, got {len(args)}: {' '.join(args)}")
    if args:
        _set(ctx, args[0])
    else:
        _list(ctx)


def _set(ctx: typer.Context, name: str) -> None:
    from hermes.config.edit import set_value

    st = state(ctx)
    if not name.strip():
        raise UserError("hermes model: the model name is empty")
    edit = set_value(st.home(), "provider.model", name, st.environ)
    out(f"provider.model = {name}  ({edit.where}); new sessions use it")


def _list(ctx: typer.Context) -> None:
    from hermes.agent.prechecks import key_problem
    from hermes.config import compose_config
    from hermes.models.catalog import list_models
    from hermes.models.errors import ModelCallError

    st = state(ctx)
    home = st.home()
    composed = compose_config(home, st.environ)
    settings: Any = composed.config.provider
    problem = key_problem(composed.config, composed.raw, st.hint_profile(), home.env_file)
    if problem is not None:
        raise UserError(problem)
    try:
        found = list_models(settings)
    except ModelCallError as exc:
        raise UserError(f"provider {settings.name}: {exc}") from exc
    sys.stderr.write(f"models of provider {settings.name} ({found.source}):\n")
    for name in found.models:
        out(f"{'*' if name == settings.model else ' '} {name}")
    if settings.model not in found.models:
        sys.stderr.write(f"current: {settings.model} (not in this list)\n")
