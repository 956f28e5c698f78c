"""``hermes sandbox list | prune``: the docker sandbox containers of this profile (or all);
``hermes sandbox explain``: what the local sandbox lets this profile's commands do.

The docker SDK is imported only when one of these commands runs.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from hermes.cli.app import new_app, out, state

app = new_app("Sandboxes: the docker containers (environment: docker; list, prune) and "
              "the local commands' confinement (explain).")

ALL_PROFILES = typer.Option(False, "--all-profiles", help="Every profile's sandboxes on this "
                            "docker host, not only this profile's.")


def _describe(client: Any, container: Any) -> dict[str, Any]:
    from hermes.environments.docker_sandbox import idle_seconds

    idle = idle_seconds(client, container)
    labels = container.labels
    return {"name": container.name, "profile": labels.get("hermes.profile", ""),
            "task": labels.get("hermes.task", ""), "session": labels.get("hermes.session", ""),
            "status": container.status, "image": ",".join(container.image.tags) or "?",
            "idle_seconds": None if idle is None or idle == float("inf") else round(idle),
            "idle_timeout": float(labels.get("hermes.idle_timeout") or 0),
            "home": labels.get("hermes.home", "")}


@app.command("list")
def list_(ctx: typer.Context, all_profiles: bool = ALL_PROFILES,
          as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The sandbox containers, with their profile, task, status and idle time."""
    from hermes.environments.docker_sandbox import connect, sandboxes

    cli = state(ctx)
    client = connect(cli.environ)
    home = None if all_profiles else cli.home()
    rows = [_describe(client, container) for container in sandboxes(client, home)]
    if as_json:
        out(json.dumps(rows, indent=2))
        return
    if not rows:
        out("no sandboxes" + ("" if all_profiles else f" for profile {cli.home().name}"))
        return
    for row in rows:
        idle = "busy" if row["idle_seconds"] is None and row["status"] == "running" \
            else f"idle {row['idle_seconds']}s" if row["idle_seconds"] is not None else "stopped"
        out(f"{row['name']}  profile {row['profile']}  task {row['task']}  {row['status']}  "
            f"{idle} (reaped after {row['idle_timeout']:.0f}s)  image {row['image']}")


@app.command()
def prune(ctx: typer.Context, all_profiles: bool = ALL_PROFILES,
          force: bool = typer.Option(False, "--force", help="Remove them all, idle or not.")
          ) -> None:
    """Remove sandboxes idle longer than their idle_timeout (all of them with --force),
    then the workspace volumes no sandbox uses any more."""
    from hermes.environments.docker_mounts import remove_unused_volumes
    from hermes.environments.docker_sandbox import connect, reap_idle, remove_quietly, sandboxes

    cli = state(ctx)
    client = connect(cli.environ)
    home = None if all_profiles else cli.home()
    if force:
        removed = []
        for container in sandboxes(client, home):
            remove_quietly(container)
            removed.append(container.name)
    else:
        removed = reap_idle(client, home)
    volumes = remove_unused_volumes(client, home)
    for name in removed:
        out(f"removed {name}")
    for name in volumes:
        out(f"removed volume {name}")
    if not removed and not volumes:
        out("nothing to remove" + ("" if force else " (no sandbox is idle past its "
                                   "idle_timeout; --force removes them all)"))


@app.command()
def explain(ctx: typer.Context,
            overrides: list[str] | None = typer.Argument(None, help="Hydra overrides to "
                                                         "explain with."),
            as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """What this profile's local commands can read, write and reach
    (environment.local.sandbox), and how to widen it."""
    from hermes.environments.sandbox.explain import explain_profile, render

    cli = state(ctx)
    home = cli.home()
    found = explain_profile(home, cli.environ, overrides or [])
    out(json.dumps(found, indent=2) if as_json else "\n".join(render(found, home.name)))
