"""``hermes ab show`` output: table (rich), json, csv or Markdown. The best arm per
column is marked ``*``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal

from hermes.experiments.summary import ArmSummary, Comparison, best
from hermes.hints import command

Format = Literal["table", "json", "csv", "md"]
FORMATS: tuple[str, ...] = ("table", "json", "csv", "md")


@dataclass(frozen=True)
class View:
    """What ``show`` renders for one experiment."""

    experiment: str
    done: int
    total: int
    summaries: list[ArmSummary]
    comparison: Comparison | None


def _pct(s: ArmSummary) -> str:
    if s.pass_rate is None:
        return "-"
    return f"{s.pass_rate:.0%} [{s.pass_low:.0%}–{s.pass_high:.0%}]"


def _num(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


COLUMNS: list[tuple[str, str | None, Callable[[ArmSummary], str]]] = [
    ("arm", None, lambda s: s.arm),
    ("runs", None, lambda s: str(s.runs)),
    ("pass rate [95% CI]", "pass_rate", _pct),
    ("latency p50", "latency_median", lambda s: _num(s.latency_median, " s")),
    ("latency p90", "latency_p90", lambda s: _num(s.latency_p90, " s")),
    ("first token p50", None, lambda s: _num(s.first_token_median, " s")),
    ("mean cost", "cost_mean", lambda s: "-" if s.cost_mean is None else f"${s.cost_mean:.6f}"),
    ("mean tokens", "tokens_mean", lambda s: _num(s.tokens_mean, digits=0)),
    ("mean tool calls", "tool_calls_mean", lambda s: _num(s.tool_calls_mean, digits=1)),
]


def table_rows(view: View) -> tuple[list[str], list[list[str]]]:
    """Header and cells, with ``*`` after the best value of each column."""
    marks = best(view.summaries)
    rows = []
    for s in view.summaries:
        rows.append([text(s) + (" *" if key and s.arm in marks.get(key, set()) else "")
                     for _title, key, text in COLUMNS])
    return [title for title, _key, _text in COLUMNS], rows


def footer(view: View) -> list[str]:
    lines = [f"{view.done} of {view.total} runs done; * best in its column."]
    if view.comparison is not None:
        lines += view.comparison.sentences
    return lines


def render(view: View, fmt: Format, runs: list[dict[str, Any]] | None = None) -> str:
    """The table in ``fmt``; JSON also holds ``runs`` when given."""
    if fmt == "json":
        return json.dumps(_json(view) | ({"runs": runs} if runs is not None else {}),
                          indent=2) + "\n"
    if fmt == "csv":
        return _csv(view)
    header, rows = table_rows(view)
    if fmt == "md":
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines + [""] + footer(view)) + "\n"
    return _rich(view, header, rows)


def _rich(view: View, header: list[str], rows: list[list[str]]) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"experiment {view.experiment}", title_justify="left")
    for index, title in enumerate(header):
        table.add_column(title, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(table)
    for line in footer(view):
        console.print(line, soft_wrap=True)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in output.splitlines()) + "\n"


def render_runs(rows: list[dict[str, Any]], profile: str) -> str:
    """One line per run, failed checks named, and how to open a transcript (``hermes
    sessions show`` finds a run's session in its experiment)."""
    lines = [""]
    for r in rows:
        failed = [kind for kind, check in r["checks"].items() if not check["passed"]]
        verdict = "pass" if r["passed"] else "FAIL " + (", ".join(failed) or r["exit_reason"])
        cost = "-" if r["cost"] is None else f"${r['cost']:.6f}"
        lines.append(f"{r['arm']}  {r['task']}#{r['repeat']}  {verdict}  "
                     f"{r['latency_total']:.2f} s  {cost}  session {r['session_id'] or '-'}")
    lines.append(f"transcripts: `{command(profile, 'sessions show SESSION')}`")
    return "\n".join(lines) + "\n"


def _csv(view: View) -> str:
    """One row per arm: the JSON's raw numbers (rates 0–1, seconds, USD; empty for
    none) in its names, and the columns the arm is best in."""
    marks = best(view.summaries)
    names = [f.name for f in fields(ArmSummary)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*names, "best"])
    for summary in view.summaries:
        values = summary.to_json()
        writer.writerow([*("" if values[n] is None else values[n] for n in names),
                         " ".join(c for c, arms in marks.items() if summary.arm in arms)])
    return buffer.getvalue()


def _json(view: View) -> dict[str, Any]:
    marks = best(view.summaries)
    return {"experiment": view.experiment, "done": view.done, "total": view.total,
            "arms": [s.to_json() for s in view.summaries],
            "best": {column: sorted(arms) for column, arms in marks.items()},
            "comparison": view.comparison.to_json() if view.comparison else None}


def view_of(experiment: Any) -> tuple[View, list[dict[str, Any]]]:
    """The view of a stored experiment, and its rows."""
    from hermes.experiments.results import open_results
    from hermes.experiments.summary import compare, summarise_all

    with open_results(experiment.results_db) as results:
        rows = results.rows()
    names = [arm.name for arm in experiment.arms]
    comparison = compare(names[0], names[1], rows) if len(names) == 2 else None
    view = View(experiment.id, len(rows), len(experiment.cells()), summarise_all(names, rows),
                comparison)
    return view, rows
