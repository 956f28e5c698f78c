"""``hermes hooks``: the shell hooks of the config (``hooks:``) and the user's consent.

A configured command runs only once accepted for its event; ``accept`` records that
in the profile (``shell-hooks.json``), as an interactive chat's prompt does.
"""

from __future__ import annotations

from typing import Any

import typer

from hermes.cli.app import confirm, new_app, out, state
from hermes.errors import UserError

app = new_app("Shell hooks: commands the config runs on hook events, once you accept them.")


def _hooks(ctx: typer.Context) -> tuple[Any, list[Any]]:
    from hermes.plugins.settings import layered_hooks
    from hermes.plugins.shell_hooks import Consent, hook_specs

    st = state(ctx)
    home = st.home()
    return Consent(home), hook_specs(layered_hooks(home, st.environ))


@app.command("list")
def list_hooks(ctx: typer.Context) -> None:
    """The configured shell hooks and whether each is accepted."""
    consent, specs = _hooks(ctx)
    for spec in specs:
        mark = "accepted" if consent.has(spec) else "not accepted"
        out(f"{mark:13} {spec.describe()} (timeout {spec.timeout:g} s)")
    if not specs:
        out("(no shell hooks; add some under `hooks:` in the profile's config.yaml)")


@app.command("accept")
def accept(ctx: typer.Context,
           yes: bool = typer.Option(False, "--yes", "-y", help="Accept every configured hook "
                                                               "without asking.")) -> None:
    """Accept the configured hooks not accepted yet (each is asked about, or --yes)."""
    consent, specs = _hooks(ctx)
    pending = [spec for spec in specs if not consent.has(spec)]
    for spec in pending:
        question = f"run `{spec.command}` on {spec.describe().split(':')[0]}, with your user's " \
                   "rights?"
        if yes or confirm(question, refusal="nothing accepted"):
            consent.accept(spec)
            out(f"accepted {spec.describe()}")
    if not pending:
        out("every configured shell hook is accepted already")


@app.command("revoke")
def revoke(ctx: typer.Context,
           command: str = typer.Argument(..., help="The hook's command, as configured.")) -> None:
    """Forget the consent for COMMAND (it stops running until accepted again)."""
    consent, _ = _hooks(ctx)
    if not consent.revoke(command):
        raise UserError(f"no accepted shell hook runs {command!r}; `hermes hooks list` "
                        "shows them")
    out(f"revoked {command}")
