"""Planning an experiment: every arm composed and every task line parsed before anything
runs; all problems reported together, and nothing written unless there are none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes.errors import HermesError, UserError
from hermes.experiments.arms import ComposedArm, compose_arms, plan_arms
from hermes.experiments.store import Experiment, RunSettings, create_experiment
from hermes.experiments.tasks import Task, read_tasks, single_task
from hermes.home import Home


def new_experiment(home: Home, manager: Any, environ: Mapping[str, str], *,
                   sweeps: Sequence[str], profiles: Sequence[str], query: str | None,
                   tasks_file: Path | None, settings: RunSettings) -> Experiment:
    """Check everything, then write the experiment (``UserError`` listing every problem)."""
    from hermes.config.stored import dump_stored

    problems: list[str] = []
    tasks = _tasks(query, tasks_file, problems)
    composed: list[ComposedArm] = []
    try:
        arms = plan_arms(profiles or [home.name], sweeps)
        composed, arm_problems = compose_arms(arms, manager, environ)
        problems += arm_problems
    except HermesError as exc:
        problems.append(str(exc))
    problems += _local_only(composed, tasks)
    judge = _judge(home, environ, tasks, tasks_file, settings, problems)
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        raise UserError(f"{count}, nothing ran: " + "; ".join(problems))
    if not composed:
        raise UserError("the sweep has no arms (an empty range?)")
    stored = [(c.arm, dump_stored(c.raw)) for c in composed]
    return create_experiment(home, stored, tasks, settings, judge)


def _local_only(composed: Sequence[ComposedArm], tasks: Sequence[Task]) -> list[str]:
    """Task files and shell checks live in a local directory: a sandboxed arm cannot see them."""
    needs = [t.id for t in tasks if t.files or t.expect.shell]
    if not needs:
        return []
    return [f"arm {c.arm.name}: environment {kind} cannot see task {needs[0]!r}'s files or "
            "shell check (they need environment local)"
            for c in composed if (kind := c.raw.get("environment", {}).get("kind")) != "local"]


def _tasks(query: str | None, tasks_file: Path | None, problems: list[str]) -> list[Task]:
    if (query is None) == (tasks_file is None):
        problems.append("give the task: -q PROMPT or --tasks FILE.jsonl (one of them)")
        return []
    if query is not None:
        if not query.strip():
            problems.append("-q needs the prompt to send")
            return []
        return [single_task(query)]
    assert tasks_file is not None
    tasks, task_problems = read_tasks(tasks_file)
    problems += task_problems
    return tasks


def _judge(home: Home, environ: Mapping[str, str], tasks: list[Task], tasks_file: Path | None,
           settings: RunSettings, problems: list[str]) -> str | None:
    """The judge's composed config (the profile's provider, ``--judge-model``), if needed."""
    rubric = [t.id for t in tasks if t.expect.rubric]
    if settings.judge_model is None:
        if rubric:
            where = tasks_file.name if tasks_file else "tasks"
            problems.append(f"{where}: task {rubric[0]!r} has a rubric: name the judge "
                            "with --judge-model MODEL")
        return None
    from hermes.config import compose_config
    from hermes.config.overrides import quote
    from hermes.config.stored import dump_stored

    try:
        composed = compose_config(home, environ, [f"provider.model={quote(settings.judge_model)}"])
    except HermesError as exc:
        problems.append(f"judge: {exc}")
        return None
    return dump_stored(composed.raw)


def rerun_experiment(home: Home, old: Experiment) -> Experiment:
    """A new experiment with ``old``'s stored configs (byte for byte), tasks and settings."""
    stored = [(arm, old.arm_config(i).read_text(encoding="utf-8"))
              for i, arm in enumerate(old.arms)]
    judge = old.judge_config.read_text(encoding="utf-8") if old.judge_config.is_file() else None
    return create_experiment(home, stored, old.tasks, old.settings, judge, rerun_of=old.id)
