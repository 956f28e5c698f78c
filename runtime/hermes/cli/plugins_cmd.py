"""``hermes plugins``: list, enable, disable, install, remove, info.

Thin: each command parses, calls ``hermes.plugins.manage`` / ``install``, renders.
Listing imports no plugin and composes no config (the layers' YAML is read), so it
answers at once; ``enable`` loads the plugin once to check it and record its CLI
commands.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from hermes.cli.app import new_app, out, state

app = new_app("Plugins: tools, hooks, commands and providers from outside Hermes (opt-in).")
COLUMNS = ("NAME", "STATUS", "VERSION", "SOURCE", "DESCRIPTION")


def _plugins(ctx: typer.Context) -> Any:
    from hermes.plugins.manage import Plugins

    st = state(ctx)
    return Plugins(st.home(), st.environ)


def _warn(line: str) -> None:
    sys.stderr.write(f"warning: {line}\n")


@app.command("list")
def list_plugins(ctx: typer.Context) -> None:
    """Every plugin found (home, plugins.directories, project, packages, bundled), with
    whether it loads."""
    from hermes.plugins.discovery import shadow_refusal

    plugins = _plugins(ctx)
    discovery = plugins.discovery()
    for problem in discovery.problems:
        _warn(f"plugin skipped: {problem}")
    rows = [(f.key, plugins.status(f), f.manifest.version or "-", f.source,
             f.manifest.description) for f in discovery.found]
    out(_table([COLUMNS, *rows]) if rows else "(no plugins)")
    for hidden, winner in discovery.shadowed:
        out(f"  {hidden.key} from {hidden.source} ({hidden.where}) is shadowed by the "
            f"{winner.source} one")
    for plugin, kept in discovery.refused:
        out(f"  {shadow_refusal(plugin, kept)}")
    enabled = sum(1 for row in rows if row[1].startswith("enabled"))
    out(f"\n{len(rows)} plugin{'s' if len(rows) != 1 else ''}, {enabled} enabled; plugins are "
        "opt-in: `hermes plugins enable NAME`")


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)),
                                row[-1]]).rstrip() for row in rows)


@app.command("enable")
def enable(ctx: typer.Context, name: str = typer.Argument(..., help="The plugin's name."),
           source: str | None = typer.Option(
               None, "--source", help="The one from this source (home, directory, project, "
                                      "entrypoint) where several sources have NAME: it then "
                                      "replaces the others (plugins.allow_shadow).")) -> None:
    """Load NAME from the next session on; asks for its missing variables at a terminal
    (they go to the profile's .env), else refuses naming them."""
    plugins = _plugins(ctx)
    found, state_ = plugins.enable(name, _ask if sys.stdin.isatty() else None, source)
    out(f"enabled {found.key} {found.manifest.version}".rstrip() +
        f" ({found.source}); new sessions load it (restart a running gateway)")
    if state_ is not None and state_.status == "loaded":
        out(f"  registers {state_.detail}")


def _ask(var: Any) -> str:
    """The manifest's ``prompt`` as the question (else the name), with its description
    and where to get a value."""
    from hermes.cli.app import refused_at_end_of_input

    hint = "".join(f" ({part})" for part in (var.description, var.url) if part)
    question = f"{var.prompt} [{var.name}]" if var.prompt else var.name
    with refused_at_end_of_input("the plugin was not enabled"):
        return str(typer.prompt(f"{question}{hint}", hide_input=var.secret or var.password))


@app.command("disable")
def disable(ctx: typer.Context, name: str = typer.Argument(..., help="The plugin's name.")
            ) -> None:
    """Never load NAME (plugins.disabled wins over plugins.enabled)."""
    key = _plugins(ctx).disable(name)
    out(f"disabled {key}; new sessions do not load it (restart a running gateway)")


@app.command("install")
def install(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="A directory, a git URL (#subdir picks one "
                                           "inside), or a Python package (pip:SPEC)."),
    enable_: bool = typer.Option(False, "--enable", help="Enable it right away."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask about scan findings "
                                                        "(they still need --force)."),
    force: bool = typer.Option(False, "--force", help="Install despite scan findings, and "
                                                      "replace an installed plugin of the "
                                                      "same name."),
) -> None:
    """Install a plugin into this profile (a package: into Hermes' environment). A
    directory or git plugin is scanned first, as skills are; findings are shown and need
    your yes at a terminal, else --force."""
    from hermes.plugins.install import install as install_plugin

    st = state(ctx)
    scanned: list[str] = []

    def review(plugin: str, findings: list[Any]) -> None:
        from hermes.cli.skills_install import consent, show_findings

        scanned.append(f"{len(findings)} finding(s)" if findings else "scan: clean")
        if findings:
            out(f"  {plugin} ({scanned[-1]})")
            show_findings(findings)
            nobody_asked = yes or force or not sys.stdin.isatty()
            consent([plugin], nobody_asked, force, f"install plugin {plugin}",
                    what="nothing installed")

    name, record = install_plugin(st.home(), source, force=force, review=review)
    commit = f" at {record['commit'][:12]}" if record.get("commit") else ""
    scan = f" ({scanned[0]})" if scanned else ""
    out(f"installed {name} {record.get('version') or ''}".rstrip() + f" from "
        f"{record['source']}{commit}{scan}")
    if enable_:
        enable(ctx, name, None)
    else:
        out(f"enable it with `hermes plugins enable {name}`")


@app.command("remove")
def remove(ctx: typer.Context, name: str = typer.Argument(..., help="The plugin's name."),
           yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask.")) -> None:
    """Remove a plugin installed in this profile (or a package `install` added); asks
    first."""
    from hermes.cli.app import confirm
    from hermes.errors import UserError
    from hermes.plugins.install import removable
    from hermes.plugins.install import remove as remove_plugin

    plugins = _plugins(ctx)
    found = plugins.discovery().get(name)
    what = removable(plugins.home, name, found)  # refused before asking
    if not yes and not confirm(f"remove plugin {name} ({what})?", refusal="nothing removed"):
        raise UserError("not confirmed; nothing removed")
    removed = remove_plugin(plugins.home, name, found)
    if found is not None and any(n in plugins.settings.enabled for n in found.names):
        plugins.disable(found.key)
    out(f"removed {found.key if found else name}: {removed}")


@app.command("info")
def info(ctx: typer.Context, name: str = typer.Argument(..., help="The plugin's name.")
         ) -> None:
    """Everything known about NAME: manifest, where it is, whether it loads, its
    variables (names only), its CLI commands, where it was installed from."""
    from hermes.cli.plugins_render import render_info

    plugins = _plugins(ctx)
    out(render_info(plugins, plugins.find(name)))
