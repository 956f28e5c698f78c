"""``hermes curator status | run [--dry-run]``: upkeep of this profile's skills.

Thin: compose the config (``curator.*``, ``skills.*``), build the home's curator, render.
Imports neither litellm nor docker nor the agent loop.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from hermes.cli.app import new_app, out, state
from hermes.config.learning_schema import format_duration

if TYPE_CHECKING:
    from hermes.learning.curator import Curator

app = new_app("The curator: marks this profile's long-unused skills stale, then archives "
              "them to skills/.archive/ (never deletes). The gateway and the warm server "
              "run it when due (curator.interval, once idle for curator.idle).")
OVERRIDES_HELP = "Hydra overrides for this run, e.g. curator.stale_after=14d."


def _curator(ctx: typer.Context, overrides: Sequence[str]) -> Curator:
    from hermes.config import compose_config
    from hermes.learning.curator import home_curator
    from hermes.skills.store import skills_store

    st = state(ctx)
    home = st.home()
    config = compose_config(home, st.environ, list(overrides)).config
    return home_curator(home, skills_store(home, config.skills), config.curator)


@app.command()
def status(ctx: typer.Context,
           overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP)) -> None:
    """When the curator ran, when it may run next, and what a run would do now."""
    curator = _curator(ctx, overrides or [])
    report = curator.status()
    settings = curator.settings
    out(f"enabled: {'yes' if report.enabled else 'no (curator.enabled)'}")
    out(f"last run: {_when(report.last_run) if report.last_run else 'never'}")
    if report.next_run is None:
        out("next run: the first automatic tick only records its time")
    else:
        out(f"next run: from {_when(report.next_run)} (every "
            f"{format_duration(settings.interval)}), once idle for "
            f"{format_duration(settings.idle)}" + _idle(report.idle_until))
    out(f"rules: stale after {format_duration(settings.stale_after)} unused, archived after "
        f"{format_duration(settings.archive_after)}; pinned and cron skills are exempt")
    out("a run now would: " + _plan(report.plan.stale, report.plan.archived, report.plan.exempt))


@app.command()
def run(ctx: typer.Context,
        overrides: list[str] | None = typer.Argument(None, help=OVERRIDES_HELP),
        dry_run: bool = typer.Option(False, "--dry-run",
                                     help="Only show what would change.")) -> None:
    """Curate now, whatever the interval and idle time."""
    curator = _curator(ctx, overrides or [])
    done = curator.run(dry_run=dry_run)
    prefix = "dry run, nothing changed; a run would: " if dry_run else "curated: "
    out(prefix + _plan(done.stale, done.archived, done.exempt))
    if done.archived and not dry_run:
        out(f"archived skills are in {curator.skills.archive_dir}")


def _plan(stale: Sequence[str], archived: Sequence[str], exempt: Sequence[str]) -> str:
    parts = []
    if stale:
        parts.append("mark stale " + ", ".join(stale))
    if archived:
        parts.append("archive " + ", ".join(archived))
    text = "; ".join(parts) or "change nothing"
    return text + (f" (exempt: {', '.join(exempt)})" if exempt else "")


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def _idle(until: float | None) -> str:
    if until is None:
        return " (no activity recorded)"
    return f" (idle from {_when(until)})" if until > time.time() else " (idle now)"
