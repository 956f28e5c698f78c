"""``hermes ab``: run arms side by side on the same tasks, and compare them.

``hermes ab SWEEPS... -q PROMPT`` (or ``--tasks FILE``) is ``hermes ab run ...``; the
other commands read what runs left in ``experiments/<id>/`` of the home.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from hermes.cli.app import HermesGroup, out, state
from hermes.errors import UserError
from hermes.hints import command


class ABGroup(HermesGroup):
    """``hermes ab ARGS`` means ``hermes ab run ARGS`` unless ARGS name a command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)  # type: ignore[no-any-return]


app = typer.Typer(cls=ABGroup, no_args_is_help=True, add_completion=False,
                  rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
                  help="A/B experiments: run arms (configs) side by side on the same tasks, "
                  "compare them, and keep the results in experiments/<id>/ of the home.\n\n"
                  "\b\n  hermes ab provider.model=gpt-4o,gpt-4o-mini -q \"...\"\n"
                  "  hermes ab provider=openai,anthropic --tasks tasks.jsonl --repeat 3\n"
                  "runs an experiment (the same as `hermes ab run ...`).")

SWEEPS_HELP = ("Hydra multirun sweeps; the cross product makes the arms: "
               "provider=openai,anthropic provider.model=gpt-4o,gpt-4o-mini")
FORMAT_HELP = "table, json, csv or md"


@app.command("run")
def run(
    ctx: typer.Context,
    sweeps: list[str] | None = typer.Argument(None, help=SWEEPS_HELP),
    query: str | None = typer.Option(None, "--query", "-q", help="One prompt for every arm."),
    tasks: Path | None = typer.Option(None, "--tasks", help="Tasks: one JSON object per line."),
    profiles: str | None = typer.Option(None, "--profiles",
                                        help="Whole profiles as arms: a,b (default: this one)."),
    repeat: int = typer.Option(1, "--repeat", min=1, help="Runs per arm and task."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Runs at once."),
    budget: float | None = typer.Option(None, "--budget", min=0,
                                        help="Stop starting runs once this much USD is spent."),
    timeout: float | None = typer.Option(None, "--timeout", min=0.1,
                                         help="Seconds one run may take (then: timeout)."),
    judge_model: str | None = typer.Option(None, "--judge-model",
                                           help="Model (at this profile's provider) that "
                                           "judges rubrics."),
    yolo: bool = typer.Option(False, "--yolo", help="Run dangerous commands without asking."),
    keep: bool = typer.Option(False, "--keep", help="Write the runs' memory and skill "
                              "changes back to the profiles."),
    fmt: str = typer.Option("table", "--format", help=FORMAT_HELP),
) -> None:
    """Run an experiment: every arm × task × repeat, each in a scratch copy of its home."""
    from hermes.experiments.plan import new_experiment
    from hermes.experiments.store import RunSettings

    _check_format(fmt)
    st = state(ctx)
    home = st.home()
    names = [p.strip() for p in (profiles or "").split(",") if p.strip()]
    settings = RunSettings(repeat, concurrency, budget, timeout, judge_model, yolo, keep)
    experiment = new_experiment(home, st.manager(), st.environ, sweeps=list(sweeps or []),
                                profiles=names, query=query, tasks_file=tasks,
                                settings=settings)
    sys.stderr.write(f"experiment {experiment.id}: {len(experiment.arms)} arms × "
                     f"{len(experiment.tasks)} tasks × {repeat} = "
                     f"{len(experiment.cells())} runs\n")
    _execute(ctx, experiment, fmt)


@app.command("resume")
def resume(ctx: typer.Context, experiment_id: str = typer.Argument(..., metavar="ID"),
           budget: float | None = typer.Option(None, "--budget", min=0,
                                               help="A new budget (USD) for the whole "
                                               "experiment, kept."),
           fmt: str = typer.Option("table", "--format", help=FORMAT_HELP)) -> None:
    """Finish an interrupted experiment: runs only the cells that have no result."""
    from dataclasses import replace

    from hermes.experiments.store import open_experiment, with_settings

    _check_format(fmt)
    experiment = open_experiment(state(ctx).home(), experiment_id)
    if budget is not None:
        experiment = with_settings(experiment, replace(experiment.settings, budget=budget))
    _execute(ctx, experiment, fmt)


@app.command("rerun")
def rerun(ctx: typer.Context, experiment_id: str = typer.Argument(..., metavar="ID"),
          fmt: str = typer.Option("table", "--format", help=FORMAT_HELP)) -> None:
    """Run an experiment again as a new one: the same arm configs, tasks and settings."""
    from hermes.experiments.plan import rerun_experiment
    from hermes.experiments.store import open_experiment

    _check_format(fmt)
    home = state(ctx).home()
    experiment = rerun_experiment(home, open_experiment(home, experiment_id))
    sys.stderr.write(f"experiment {experiment.id}: rerun of {experiment.rerun_of}\n")
    _execute(ctx, experiment, fmt)


@app.command("show")
def show(ctx: typer.Context, experiment_id: str = typer.Argument(..., metavar="ID"),
         fmt: str = typer.Option("table", "--format", help=FORMAT_HELP),
         runs: bool = typer.Option(False, "--runs", help="Every run too: its checks and "
                                   "session (the transcript's id).")) -> None:
    """The comparison table: pass rate (Wilson 95 % interval), latency, cost, tokens."""
    from hermes.experiments.render import render, render_runs, view_of
    from hermes.experiments.store import open_experiment

    _check_format(fmt)
    home = state(ctx).home()
    experiment = open_experiment(home, experiment_id)
    view, rows = view_of(experiment)
    sys.stdout.write(render(view, fmt, rows if runs else None))  # type: ignore[arg-type]
    if runs and fmt == "table":
        sys.stdout.write(render_runs(rows, home.name))


@app.command("report")
def report(ctx: typer.Context, experiment_id: str = typer.Argument(..., metavar="ID"),
           output: Path | None = typer.Option(None, "--output", "-o",
                                              help="Where to write (default: "
                                              "experiments/<id>/report.html).")) -> None:
    """Write one self-contained HTML page with charts (opens offline)."""
    from hermes.experiments.report import write_report
    from hermes.experiments.store import open_experiment

    experiment = open_experiment(state(ctx).home(), experiment_id)
    out(str(write_report(experiment, output or experiment.directory / "report.html")))


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """Experiments in this home, oldest first."""
    from hermes.experiments.history import list_lines

    for line in list_lines(state(ctx).home()):
        out(line)


@app.command("diff")
def diff(ctx: typer.Context, first: str = typer.Argument(..., metavar="ID1"),
         second: str = typer.Argument(..., metavar="ID2")) -> None:
    """Compare two experiments: arm configs that differ, and each arm's figures."""
    from hermes.experiments.history import diff_lines
    from hermes.experiments.store import open_experiment

    home = state(ctx).home()
    for line in diff_lines(open_experiment(home, first), open_experiment(home, second)):
        out(line)


def _check_format(fmt: str) -> None:
    from hermes.errors import did_you_mean
    from hermes.experiments.render import FORMATS

    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}"
                        f"{did_you_mean(fmt, FORMATS)}")


def _execute(ctx: typer.Context, experiment: Any, fmt: str) -> None:
    """Run the missing cells with a progress bar, then print the table."""
    from hermes.experiments.render import render, view_of
    from hermes.experiments.runner import prepare, run_experiment

    st = state(ctx)
    env = prepare(experiment, st.home(), st.environ)
    with _progress_bar() as update:
        outcome = run_experiment(env, update)
    view, _rows = view_of(experiment)
    sys.stdout.write(render(view, fmt))  # type: ignore[arg-type]
    done = f"{outcome.progress.done} of {outcome.progress.total} runs done"
    profile = st.home().name
    if outcome.status == "interrupted":
        sys.stderr.write(f"interrupted: {done} — finish with "
                         f"`{command(profile, f'ab resume {experiment.id}')}`\n")
        raise typer.Exit(130)
    if outcome.status == "budget":
        sys.stderr.write(f"budget reached (${outcome.progress.spent:.6f} of "
                         f"${experiment.settings.budget}): {done} — go on with "
                         f"`{command(profile, f'ab resume {experiment.id} --budget MORE')}`\n")
    sys.stderr.write(f"experiment {experiment.id} — "
                     f"`{command(profile, f'ab report {experiment.id}')}`\n")


@contextmanager
def _progress_bar() -> Iterator[Callable[[Any], None]]:
    """The runner's ``on_progress``: a rich bar on stderr with elapsed time and the money
    spent so far."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[spent]}"))
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task("runs", total=None, spent="$0")

        def update(p: Any) -> None:
            progress.update(task, completed=p.done, total=p.total, spent=f"${p.spent:.4f}")

        yield update
