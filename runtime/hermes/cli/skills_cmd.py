"""``hermes skills``: list, show, create, edit, delete, restore, install, update, pin, unpin,
audit.

Thin: each command parses, calls the skills store (``hermes.skills``), renders. No
Hydra and no model layer: ``skills.*`` comes from the config layers
(``skills/settings.py``), so a listing of hundreds of skills answers at once.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

from hermes.cli.app import confirm, new_app, out, state
from hermes.errors import UserError
from hermes.skills.format import NAME_RULE
from hermes.skills.store import SkillsStore

app = new_app("Skills: reusable procedures the agent loads on demand (SKILL.md).")



def _store(ctx: typer.Context) -> SkillsStore:
    from hermes.skills.settings import management_store

    st = state(ctx)
    return management_store(st.home(), st.environ, warn=_warn)


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


@app.command("list")
def list_skills(
    ctx: typer.Context,
    category: str | None = typer.Option(None, "--category", "-c", help="Only this category."),
    tag: str | None = typer.Option(None, "--tag", help="Only skills with this tag."),
    days: float = typer.Option(7, "--days", min=0, help="Mark skills created or changed "
                                                        "within this many days."),
) -> None:
    """The skills in effect (home, skills.directories, bundled), the shadowed ones, and
    which are new or changed lately and by whom."""
    from hermes.cli.skills_render import render_listing, render_withheld, warn_nested

    store = _store(ctx)
    found = store.scan()
    warn_nested(store, found.skills)
    skills = [s for s in found.skills if (not category or (s.category or "general") == category)
              and (not tag or tag in s.tags)]
    out(render_listing(store, skills, found.shadowed, time.time() - days * 86400))
    withheld = render_withheld([p for p in found.problems
                                if not category or (p.category or "general") == category])
    if withheld and not tag:
        out(f"\n{withheld}")


@app.command("show")
def show(ctx: typer.Context, name: str = typer.Argument(..., help="The skill's name."),
         file: str | None = typer.Argument(None, help="A supporting file, e.g. "
                                                      "references/api.md.")) -> None:
    """A skill's SKILL.md (or one supporting file), after where it comes from."""
    from hermes.cli.skills_render import render_header

    store = _store(ctx)
    text = store.read(name, file)
    if file is None:
        out(render_header(store, store.get(name)))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


@app.command("create")
def create(
    ctx: typer.Context,
    name: str = typer.Argument(..., help=NAME_RULE[0].upper() + NAME_RULE[1:] + "."),
    description: str | None = typer.Option(None, "--description", "-d",
                                           help="What it does and when to use it."),
    category: str | None = typer.Option(None, "--category", "-c", help="A category directory."),
    from_file: str | None = typer.Option(None, "--from", help="A whole SKILL.md to use "
                                                              "('-' reads standard input)."),
) -> None:
    """Create a skill in this profile (from a file, or a template to fill in)."""
    from hermes.skills.editing import skill_template

    if from_file is not None:
        content = sys.stdin.read() if from_file == "-" else _read(Path(from_file))
    elif description:
        content = skill_template(name, description)
    else:
        raise UserError("give --description TEXT (a template is written) or --from FILE")
    skill = _store(ctx).create(name, content, category=category, by="user")
    out(f"created {skill.file}")
    out(f"edit it with `hermes skills edit {name}`")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--from {path}: cannot read ({exc})") from None


@app.command("edit")
def edit(ctx: typer.Context, name: str = typer.Argument(..., help="The skill's name."),
         file: str | None = typer.Argument(None, help="A supporting file instead of "
                                                      "SKILL.md.")) -> None:
    """Edit one of this profile's skills in $VISUAL/$EDITOR (validated and scanned)."""
    from hermes.cli.skills_render import edit_in_editor

    st = state(ctx)
    out(edit_in_editor(_store(ctx), st.home(), st.environ, name, file))


@app.command("delete")
def delete(ctx: typer.Context, name: str = typer.Argument(..., help="The skill's name."),
           yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask.")) -> None:
    """Delete one of this profile's skills (bundled ones are read-only)."""
    from hermes.skills.editing import deletable

    store = _store(ctx)
    skill = deletable(store, name)  # refused before asking
    if not yes and not confirm(f"delete skill {name} ({skill.path})?", refusal="nothing deleted"):
        raise UserError("not confirmed; nothing deleted")
    store.delete(name, by="user")
    out(f"deleted {name}")


@app.command("restore")
def restore(ctx: typer.Context,
            name: str | None = typer.Argument(None, help="The archived skill's name "
                                                         "(none: list the archived ones).")
            ) -> None:
    """Bring back a skill the curator archived (skills/.archive/) to where it was."""
    store = _store(ctx)
    if name is None:
        archived = store.archived()
        out("\n".join(archived) if archived else "no archived skills")
        return
    skill = store.restore(name, by="user")
    out(f"restored {skill.name} to {skill.path}")


@app.command("pin")
def pin(ctx: typer.Context, name: str = typer.Argument(..., help="The skill's name.")) -> None:
    """Pin a skill: the curator never archives it and the agent cannot delete it."""
    _store(ctx).pin(name, by="user")
    out(f"pinned {name}")


@app.command("unpin")
def unpin(ctx: typer.Context, name: str = typer.Argument(..., help="The skill's name.")) -> None:
    """Unpin a skill."""
    _store(ctx).unpin(name, by="user")
    out(f"unpinned {name}")


@app.command("install")
def install(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="A directory, or a git URL; #subdir picks a "
                                           "directory inside it."),
    category: str | None = typer.Option(None, "--category", "-c",
                                        help="Install into this category."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask (a scan finding still "
                                                        "needs --force)."),
    force: bool = typer.Option(False, "--force", help="Install despite scan findings, and "
                                                      "replace this profile's skills of the "
                                                      "same names."),
) -> None:
    """Install skills from a directory or git repository: scanned, shown, then copied
    into this profile and recorded in skills/.lock.json."""
    from hermes.cli.skills_install import run_install

    run_install(_store(ctx), source, category, yes=yes, force=force)


@app.command("update")
def update(
    ctx: typer.Context,
    names: list[str] = typer.Argument(None, help="Installed skills to update (default: all)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask (a scan finding still "
                                                        "needs --force)."),
    force: bool = typer.Option(False, "--force", help="Update despite scan findings."),
) -> None:
    """Fetch installed skills' sources again; show what changed, then replace them."""
    from hermes.cli.skills_install import run_update

    run_update(_store(ctx), names or [], yes=yes, force=force)


@app.command("audit")
def audit(ctx: typer.Context) -> None:
    """Scan every skill of this profile and of skills.directories again (exit code 1 when
    anything is found)."""
    from hermes.cli.skills_install import run_audit

    if run_audit(_store(ctx)):
        raise typer.Exit(1)
