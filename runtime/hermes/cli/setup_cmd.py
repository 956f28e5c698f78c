"""``hermes setup``: a first run that sets itself up — provider, key, model, checked.

At a terminal it asks what the flags do not say; elsewhere (or with ``--yes``) the flags
are the whole answer. Nothing is written until the choice validates and the key works.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import typer

from hermes.cli.app import out, state
from hermes.errors import UserError
from hermes.hints import command
from hermes.home import Home
from hermes.models.provider_setup import Choice, Plan


def setup(
    ctx: typer.Context,
    provider: str | None = typer.Option(None, "--provider", help="A provider option "
                                        "(conf/provider/): openai, anthropic, gemini, ..."),
    key: str | None = typer.Option(None, "--key", help="Its API key (seen in the process "
                                   "list: prefer --key-stdin)."),
    key_stdin: bool = typer.Option(False, "--key-stdin", help="Read the API key from stdin."),
    model: str | None = typer.Option(None, "--model", help="Model (default: the option's)."),
    base_url: str | None = typer.Option(None, "--base-url", help="The endpoint's base URL "
                                        "(custom, azure, a local server elsewhere)."),
    check: bool = typer.Option(True, "--check/--no-check", help="Check the key with one "
                               "cheap call before writing anything."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Ask nothing: the flags are the "
                             "whole answer."),
) -> None:
    """Pick a provider, check its key with one cheap call, store it in the profile's .env
    (0600) and say how to start. Asks at a terminal; every question is also a flag."""
    from hermes.models import provider_setup

    st = state(ctx)
    home = st.home()
    if key is not None and key_stdin:
        raise UserError("hermes setup: give the key once: --key or --key-stdin")
    if key_stdin:
        key = sys.stdin.readline().rstrip("\r\n")
    ask = not yes and not key_stdin and sys.stdin.isatty()
    choice = Choice(provider or "", key, model, base_url)
    if ask:
        choice = _ask(home, st.environ, choice)
    elif not provider:
        raise UserError("hermes setup: --provider is required when not asking at a "
                        f"terminal; one of {', '.join(_options(home, st.environ))}")
    plan = provider_setup.plan(home, st.environ, choice)
    if check:
        out(f"checked: {provider_setup.check(plan)}")
    provider_setup.apply(home, plan)
    _say_ready(home, st.hint_profile(), plan)


def _options(home: Home, environ: Mapping[str, str]) -> list[str]:
    from hermes.models.provider_setup import provider_options

    return provider_options(home, environ)


def _ask(home: Home, environ: Mapping[str, str], choice: Choice) -> Choice:
    """The questions the flags left open, at the terminal."""
    from hermes.models.provider_setup import key_name

    provider = choice.provider or _ask_provider(_options(home, environ))
    choice, composed = _compose_asking(home, environ, replace(choice, provider=provider))
    name = key_name(composed.raw)
    key = choice.key
    if key is None and name is not None:
        kept = " (Enter keeps the stored one)" if composed.config.provider.api_key else ""
        key = typer.prompt(f"{name}{kept}", default="", hide_input=True,
                           show_default=False) or None
    model = choice.model or typer.prompt("Model", default=composed.config.provider.model)
    return replace(choice, key=key, model=model)


_ASKED = {"provider.api_base": ("base_url", "Base URL of the endpoint"),
          "provider.model": ("model", "Model")}
"""What to ask for a value the option leaves unset (``???``), and where the answer goes."""


def _compose_asking(home: Home, environ: Mapping[str, str], choice: Choice
                    ) -> tuple[Choice, Any]:
    """The profile composed with ``choice``, asking for the values the option needs."""
    from hermes.config import compose_config
    from hermes.errors import MissingValueError
    from hermes.models.provider_setup import profile_text

    while True:
        try:
            text = profile_text(home, environ, choice)
            return choice, compose_config(home, environ, profile_text=text)
        except MissingValueError as exc:
            field, question = _ASKED.get(exc.key or "", (None, ""))
            if field is None or getattr(choice, field):
                raise
            choice = replace(choice, **{field: typer.prompt(question)})


def _ask_provider(options: list[str]) -> str:
    for number, name in enumerate(options, 1):
        sys.stdout.write(f"{number:3}. {name}\n")
    answer = typer.prompt("Provider (number or name)", default="openai").strip()
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1]
    return answer


def _say_ready(home: Home, profile: str | None, plan: Plan) -> None:
    settings = plan.settings
    ask = command(profile, '-z "hello"')
    out(f"ready: provider {settings.name}, model {settings.model} (profile {home.name}; "
        f"secrets in {home.env_file}, mode 0600)")
    out(f"start with `{command(profile, 'chat')}` or `{ask}`; switch models with "
        f"`{command(profile, 'model')}`")
