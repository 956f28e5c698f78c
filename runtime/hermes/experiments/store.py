"""An experiment on disk: ``experiments/<id>/`` in the home.

    experiment.json   arms (profile, overrides), repeat, run settings, created, rerun_of
    arms/<n>.yaml     each arm's composed config, exact (secrets by reference only)
    judge.yaml        the judge model's composed config, when rubrics are judged
    tasks.jsonl       the tasks, as run
    results.db        one row per arm × task × repeat (sqlite-utils; table ``runs``)
    state.db          the runs' sessions: ``HERMES_HOME=<this dir> hermes sessions show ID``
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes.errors import UserError
from hermes.experiments.arms import Arm
from hermes.experiments.tasks import Task, parse_task_line
from hermes.fsutil import atomic_write, private_dir
from hermes.home import Home

DIRECTORY = "experiments"


@dataclass(frozen=True)
class RunSettings:
    """How the cells of an experiment are run (kept, so resume runs them the same way)."""

    repeat: int = 1
    concurrency: int = 1
    budget: float | None = None
    """Stop starting runs once this much (USD) has been spent."""
    timeout: float | None = None
    """Seconds a run may take before it is interrupted (exit reason ``timeout``)."""
    judge_model: str | None = None
    yolo: bool = False
    keep: bool = False
    """Write the runs' memory and skill changes back to the profile."""


@dataclass(frozen=True)
class Experiment:
    """An experiment's definition, as stored."""

    id: str
    directory: Path
    arms: list[Arm]
    tasks: list[Task]
    settings: RunSettings
    created: float
    rerun_of: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def arm_config(self, index: int) -> Path:
        return self.directory / "arms" / f"{index + 1}.yaml"

    @property
    def judge_config(self) -> Path:
        return self.directory / "judge.yaml"

    @property
    def results_db(self) -> Path:
        return self.directory / "results.db"

    @property
    def transcripts_db(self) -> Path:
        return self.directory / "state.db"

    def cells(self) -> list[tuple[int, str, int]]:
        """Every ``(arm index, task id, repeat)``, in the order they are run."""
        return [(a, t.id, r) for r in range(1, self.settings.repeat + 1)
                for t in self.tasks for a in range(len(self.arms))]

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)


def with_settings(experiment: Experiment, settings: RunSettings) -> Experiment:
    """``experiment`` with new run settings, stored (e.g. a higher budget to resume)."""
    path = experiment.directory / "experiment.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["settings"] = asdict(settings)
    atomic_write(path, json.dumps(meta, indent=2) + "\n")
    return _load(experiment.directory)


def experiments_dir(home: Home) -> Path:
    return home.path / DIRECTORY


def create_experiment(home: Home, arms: list[tuple[Arm, str]], tasks: list[Task],
                      settings: RunSettings, judge: str | None = None,
                      rerun_of: str | None = None) -> Experiment:
    """Write a new experiment (arms with their config text, tasks, settings) all at once:
    built in a temporary directory and renamed into place."""
    from hermes.experiments.tasks import dump_tasks

    parent = experiments_dir(home)
    private_dir(parent)
    experiment_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=".new-"))
    try:
        for index, (_arm, text) in enumerate(arms, 1):
            atomic_write(staging / "arms" / f"{index}.yaml", text, mode=0o600)
        if judge is not None:
            atomic_write(staging / "judge.yaml", judge, mode=0o600)
        atomic_write(staging / "tasks.jsonl", dump_tasks(tasks))
        meta = {"id": experiment_id, "created": time.time(), "rerun_of": rerun_of,
                "arms": [arm.to_json() for arm, _ in arms], "settings": asdict(settings)}
        atomic_write(staging / "experiment.json", json.dumps(meta, indent=2) + "\n")
        staging.rename(parent / experiment_id)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return open_experiment(home, experiment_id)


def open_experiment(home: Home, experiment_id: str) -> Experiment:
    """The experiment ``experiment_id`` (or a unique prefix of it); ``UserError`` if none."""
    parent = experiments_dir(home)
    known = list_ids(home)
    matches = [i for i in known if i == experiment_id] or \
        [i for i in known if i.startswith(experiment_id)]
    if len(matches) != 1:
        what = "matches several experiments" if matches else "is not an experiment"
        raise UserError(f"{experiment_id!r} {what} in {parent}; see `hermes ab list`")
    return _load(parent / matches[0])


def list_ids(home: Home) -> list[str]:
    """Experiment ids in the home, oldest first."""
    parent = experiments_dir(home)
    if not parent.is_dir():
        return []
    return sorted(p.name for p in parent.iterdir() if (p / "experiment.json").is_file())


def _load(directory: Path) -> Experiment:
    meta = json.loads((directory / "experiment.json").read_text(encoding="utf-8"))
    tasks = []
    for line in (directory / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        task, problem = parse_task_line(line)
        if task is None:
            raise UserError(f"{directory / 'tasks.jsonl'}: {problem}")
        tasks.append(task)
    return Experiment(meta["id"], directory, [Arm.from_json(a) for a in meta["arms"]], tasks,
                      RunSettings(**meta["settings"]), meta["created"], meta.get("rerun_of"))
