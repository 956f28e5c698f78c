"""``hermes approvals ...``: the command classes this profile allows without asking."""

from __future__ import annotations

import typer

from hermes.cli.app import new_app, out, state
from hermes.errors import UserError
from hermes.tools.approval import allowlist_path, load_approvals, save_approvals
from hermes.tools.danger import DANGER_CLASSES

app = new_app("Command classes approved 'always' in this profile: list, revoke, clear.\n\n"
              "Approvals given 'once' or for a 'session' are never stored.")


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """The classes this profile runs without asking, and what each covers."""
    home = state(ctx).home()
    approvals = load_approvals(allowlist_path(home.path))
    if not approvals:
        out(f"profile {home.name}: no command class is approved always "
            "(dangerous commands ask each time)")
        return
    out(f"profile {home.name}: approved always ({allowlist_path(home.path)})")
    width = max(len(key) for key in approvals)
    for key, when in sorted(approvals.items()):
        since = f"  since {when}" if when else ""
        out(f"  {key:<{width}}  {DANGER_CLASSES.get(key, '(no longer a known class)')}{since}")


@app.command()
def revoke(ctx: typer.Context,
           keys: list[str] = typer.Argument(..., help="Class keys, as `approvals list` "
                                                      "shows them.")) -> None:
    """Ask again before commands of these classes run."""
    home = state(ctx).home()
    path = allowlist_path(home.path)
    approvals = load_approvals(path)
    unknown = [key for key in keys if key not in approvals]
    if unknown:
        approved = ", ".join(sorted(approvals)) or "none"
        raise UserError(f"{path}: {', '.join(unknown)} not approved in profile {home.name} "
                        f"(approved: {approved}) — see `hermes approvals list`")
    save_approvals(path, {k: v for k, v in approvals.items() if k not in keys})
    for key in keys:
        out(f"revoked {key}: {DANGER_CLASSES.get(key, key)} will ask again")


@app.command()
def clear(ctx: typer.Context) -> None:
    """Revoke every class: all dangerous commands ask again."""
    home = state(ctx).home()
    path = allowlist_path(home.path)
    approvals = load_approvals(path)
    if approvals:
        save_approvals(path, {})
    out(f"profile {home.name}: cleared {len(approvals)} approved "
        f"class{'es' if len(approvals) != 1 else ''}")
