"""``hermes ab list`` and ``hermes ab diff``: experiments side by side over time."""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterator

from hermes.experiments.render import view_of
from hermes.experiments.store import Experiment, list_ids, open_experiment
from hermes.experiments.summary import ArmSummary
from hermes.hints import command
from hermes.home import Home


def list_lines(home: Home) -> Iterator[str]:
    ids = list_ids(home)
    if not ids:
        example = command(home.name, 'ab provider.model=a,b -q "..."')
        yield f"no experiments yet; start one with `{example}`"
        return
    for experiment_id in ids:
        experiment = open_experiment(home, experiment_id)
        view, rows = view_of(experiment)
        spent = sum(r["cost"] or 0.0 for r in rows)
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(experiment.created))
        rerun = f"  rerun of {experiment.rerun_of}" if experiment.rerun_of else ""
        yield (f"{experiment.id}  {created}  {len(experiment.arms)} arms × "
               f"{len(experiment.tasks)} tasks  {view.done}/{view.total} runs  "
               f"${spent:.4f}  arms: {', '.join(a.name for a in experiment.arms)}{rerun}")


def diff_lines(first: Experiment, second: Experiment) -> Iterator[str]:
    """Arms by name: config differences (unified diff), then each figure old → new."""
    yield f"--- {first.id}"
    yield f"+++ {second.id}"
    names = {a.name: i for i, a in enumerate(first.arms)}
    for index, arm in enumerate(second.arms):
        if arm.name not in names:
            yield f"arm {arm.name}: only in {second.id}"
            continue
        old = first.arm_config(names[arm.name]).read_text(encoding="utf-8").splitlines()
        new = second.arm_config(index).read_text(encoding="utf-8").splitlines()
        changes = list(difflib.unified_diff(old, new, f"{first.id}/{arm.name}",
                                            f"{second.id}/{arm.name}", lineterm="", n=1))
        yield f"arm {arm.name}: config " + ("differs" if changes else "identical")
        yield from changes
    for arm in first.arms:
        if arm.name not in {a.name for a in second.arms}:
            yield f"arm {arm.name}: only in {first.id}"
    if [t.model_dump() for t in first.tasks] != [t.model_dump() for t in second.tasks]:
        yield "tasks differ"
    yield from _figures(first, second)


def _figures(first: Experiment, second: Experiment) -> Iterator[str]:
    old = {s.arm: s for s in view_of(first)[0].summaries}
    for summary in view_of(second)[0].summaries:
        before = old.get(summary.arm)
        if before is None:
            continue
        yield (f"{summary.arm}: pass rate {_rate(before)} → {_rate(summary)}; "
               f"latency p50 {_val(before.latency_median, 's')} → "
               f"{_val(summary.latency_median, 's')}; mean cost "
               f"{_val(before.cost_mean, '$')} → {_val(summary.cost_mean, '$')}")


def _rate(summary: ArmSummary) -> str:
    return "-" if summary.pass_rate is None else f"{summary.pass_rate:.0%}"


def _val(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"${value:.6f}" if unit == "$" else f"{value:.2f} s"
