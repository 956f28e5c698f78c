"""Running an experiment's missing cells: bounded concurrency, a cost budget, Ctrl-C.

Runs execute in worker threads (one runtime each); only this thread writes
``results.db``, as each run finishes. Cells already in the database are never run
again, so an interrupted experiment resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Literal

from hermes.experiments.cell import Cell, CellEnv, run_cell
from hermes.experiments.results import Results, RunRecord, cell_key, open_results
from hermes.experiments.store import Experiment
from hermes.home import Home

Status = Literal["complete", "interrupted", "budget"]


@dataclass(frozen=True)
class Progress:
    """Where an experiment stands: shown by the progress bar after each run."""

    done: int
    total: int
    spent: float


@dataclass(frozen=True)
class Outcome:
    status: Status
    progress: Progress


def missing_cells(experiment: Experiment, done: set[str]) -> list[Cell]:
    return [Cell(a, experiment.task(t), r) for a, t, r in experiment.cells()
            if cell_key(a, t, r) not in done]


def prepare(experiment: Experiment, home: Home, environ: Mapping[str, str]) -> CellEnv:
    """Validate every arm's stored config (and the judge's) before any run starts."""
    from hermes.config.stored import load_stored
    from hermes.models.litellm_client import import_litellm
    from hermes.profiles.manager import ProfileManager

    import_litellm()  # once, here: its import would count against the first runs' time
    _warm_up()
    manager = ProfileManager(home.root, dict(environ))
    sources = [manager.home(arm.profile) for arm in experiment.arms]
    configs = [load_stored(experiment.arm_config(i), source.env_file, environ)
               for i, source in enumerate(sources)]
    judge = None
    if experiment.judge_config.is_file():
        from hermes.experiments.judge import RubricJudge
        from hermes.models.litellm_client import LiteLLMClient

        judge_settings = load_stored(experiment.judge_config, home.env_file, environ)
        judge = RubricJudge(LiteLLMClient(judge_settings.provider))
    return CellEnv(experiment, configs, sources, environ, judge)


def _warm_up() -> None:
    """Load what the first OpenAI-compatible call loads, as the warm server does, so the
    first arm's first runs are not slower for it."""
    import contextlib

    from hermes.models.warm import warm_openai_path

    with contextlib.suppress(Exception):  # only an optimisation: a failure costs time
        warm_openai_path()


def run_experiment(env: CellEnv, on_progress: Callable[[Progress], None] | None = None
                   ) -> Outcome:
    """Run every missing cell. Ctrl-C (``KeyboardInterrupt`` here) interrupts the running
    turns and returns ``interrupted``; their cells stay missing."""
    experiment = env.experiment
    with open_results(experiment.results_db) as results, \
            ThreadPoolExecutor(experiment.settings.concurrency,
                               thread_name_prefix="ab-run") as pool:
        scheduler = _Scheduler(env, results, pool, on_progress or (lambda _p: None))
        try:
            status = scheduler.run()
        except KeyboardInterrupt:
            env.stop.set()
            status = "interrupted"
            scheduler.drain()
        return Outcome(status, scheduler.progress())


class _Scheduler:
    """Keeps ``concurrency`` runs going until the cells, the budget or Ctrl-C run out."""

    def __init__(self, env: CellEnv, results: Results, pool: ThreadPoolExecutor,
                 report: Callable[[Progress], None]):
        self.env, self.results, self.pool, self.report = env, results, pool, report
        self.pending = missing_cells(env.experiment, results.done())
        self.running: set[Future[RunRecord | None]] = set()
        self.spent = results.spent()
        self.total = len(env.experiment.cells())
        self.done = self.total - len(self.pending)

    def progress(self) -> Progress:
        return Progress(self.done, self.total, self.spent)

    def run(self) -> Status:
        settings = self.env.experiment.settings
        self.report(self.progress())
        status: Status = "complete"
        while self.pending or self.running:
            while status == "complete" and self.pending \
                    and len(self.running) < settings.concurrency:
                if settings.budget is not None and self.spent >= settings.budget:
                    status = "budget"
                    break
                self.running.add(self.pool.submit(run_cell, self.pending.pop(0), self.env))
            if not self.running:
                break
            # A short timeout keeps this thread responsive to Ctrl-C.
            finished, rest = wait(self.running, timeout=0.2, return_when=FIRST_COMPLETED)
            self.running = set(rest)
            for future in finished:
                self.keep(future)
            self.report(self.progress())
        return status

    def keep(self, future: Future[RunRecord | None]) -> None:
        record = future.result()
        if record is not None:
            self.results.add(record)
            self.spent += record.cost or 0.0
            self.done += 1

    def drain(self) -> None:
        """After Ctrl-C: wait for the interrupted runs; one that finished first is kept."""
        for future in self.running:
            self.keep(future)


