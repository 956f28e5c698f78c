"""``hermes ab report``: one self-contained HTML page (inline CSS and SVG, no network).

Charts: pass rate per arm (with its Wilson interval), latency and cost distributions
per arm (every run a dot, the median a bar), and pass rate per task and arm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from hermes.experiments.render import View, table_rows, view_of
from hermes.experiments.stats import quantile
from hermes.experiments.store import Experiment
from hermes.experiments.summary import ArmSummary
from hermes.fsutil import atomic_write

WIDTH, ROW, LEFT = 720, 28, 180
SPAN = WIDTH - LEFT - 60
"""The plot's width: the right margin leaves room for the last tick's label."""
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")
CSS = """body{font:14px system-ui,sans-serif;margin:2em;color:#222;max-width:980px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right}td:first-child,th:first-child{text-align:left}svg{display:block;margin:1em 0}
svg text{font:12px system-ui,sans-serif}.answer{max-width:360px;text-align:left;
white-space:pre-wrap}"""


def write_report(experiment: Experiment, path: Path) -> Path:
    atomic_write(path, render_report(experiment))
    return path


def render_report(experiment: Experiment) -> str:
    view, rows = view_of(experiment)
    header, cells = table_rows(view)
    arms = [s.arm for s in view.summaries]
    parts = [
        f"<h1>Experiment {escape(experiment.id)}</h1>",
        f"<p>{view.done} of {view.total} runs; {len(arms)} arms × {len(experiment.tasks)} "
        f"tasks × {experiment.settings.repeat}. * marks the best arm per column.</p>",
        _html_table(header, cells),
        *[f"<p>{escape(s)}</p>" for s in (view.comparison.sentences if view.comparison else [])],
        *[part for title, svg in charts(experiment, view, rows)
          for part in (f"<h2>{escape(title)}</h2>", svg)],
        "<h2>Runs</h2>", _runs_table(rows),
    ]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>hermes ab {escape(experiment.id)}</title><style>{CSS}</style></head>"
            f"<body>{''.join(parts)}</body></html>\n")


def charts(experiment: Experiment, view: View, rows: Sequence[dict[str, Any]]
           ) -> list[tuple[str, str]]:
    """The report's charts as ``(title, inline SVG)``; every text in them escaped."""
    arms = [s.arm for s in view.summaries]
    return [
        ("Pass rate per arm (95 % Wilson interval)", _pass_chart(view.summaries)),
        ("Latency per run (s)",
         _strip_chart("chart-latency", arms, rows, "latency_total", "latency")),
        ("Cost per run (USD)", _strip_chart("chart-cost", arms, rows, "cost", "cost", "$")),
        ("Pass rate per task", _task_chart(arms, [t.id for t in experiment.tasks], rows)),
    ]


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _svg(chart_id: str, height: int, content: str, title: str) -> str:
    return (f'<svg id="{chart_id}" class="chart" role="img" width="{WIDTH}" '
            f'height="{height}" viewBox="0 0 {WIDTH} {height}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{content}</svg>')


def _label(y: float, text: str) -> str:
    return f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end">{escape(text)}</text>'


def _axis(height: int, ticks: Sequence[float], top: float, text: Callable[[float], str]
          ) -> str:
    """Grid lines and labels at ``ticks`` on a scale from 0 to ``top``."""
    return "".join(
        f'<line x1="{_x(t, top):.1f}" y1="10" x2="{_x(t, top):.1f}" y2="{height - 20}" '
        f'stroke="#eee"/><text class="tick" x="{_x(t, top):.1f}" y="{height - 5}" '
        f'text-anchor="middle">{escape(text(t))}</text>' for t in ticks)


def _x(value: float, top: float) -> float:
    return LEFT + SPAN * value / top


def nice_ticks(top: float) -> tuple[list[float], int]:
    """Ticks from 0 to at least ``top`` in 3-6 round steps (1, 2, 2.5 or 5 × 10^k), and
    the decimals that print every one of them exactly: one format for the whole axis."""
    if top <= 0:
        return [0.0], 0
    rough = top / 4
    magnitude = 10 ** math.floor(math.log10(rough))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= rough * 0.999)
    decimals = next(d for d in range(16) if abs(round(step, d) - step) < step * 1e-9)
    count = math.ceil(top / step - 1e-9)
    return [round(step * i, decimals) for i in range(count + 1)], decimals


def _pass_chart(summaries: Sequence[ArmSummary]) -> str:
    height = 40 + ROW * len(summaries)
    parts = [_axis(height, (0, 0.25, 0.5, 0.75, 1.0), 1.0, lambda t: f"{t:.0%}")]
    for i, s in enumerate(summaries):
        y = 14 + i * ROW
        parts.append(_label(y + 8, s.arm))
        parts.append(f'<rect class="bar" x="{LEFT}" y="{y}" '
                     f'width="{SPAN * (s.pass_rate or 0.0):.1f}" height="16" '
                     f'fill="{PALETTE[i % len(PALETTE)]}"/>')
        parts.append(f'<line class="interval" x1="{_x(s.pass_low, 1.0):.1f}" y1="{y + 8}" '
                     f'x2="{_x(s.pass_high, 1.0):.1f}" y2="{y + 8}" stroke="#222" '
                     'stroke-width="2"/>')
    return _svg("chart-pass-rate", height, "".join(parts), "pass rate per arm")


def _strip_chart(chart_id: str, arms: Sequence[str], rows: Sequence[dict[str, Any]],
                 column: str, what: str, prefix: str = "") -> str:
    """Every run of each arm a dot, its median a bar; an arm without a value for
    ``column`` gets a note, and a chart without any gets no axis."""
    values = {arm: [r[column] for r in rows if r["arm"] == arm and r[column] is not None]
              for arm in arms}
    found = [v for vs in values.values() for v in vs]
    height = 40 + ROW * len(arms)
    ticks, decimals = nice_ticks(max(found, default=0.0))
    top = ticks[-1] or 1.0
    parts = [_axis(height, ticks, top, lambda t: f"{prefix}{t:.{decimals}f}")] if found else []
    for i, arm in enumerate(arms):
        y = 22 + i * ROW
        parts.append(_label(y, arm))
        if not values[arm]:
            parts.append(f'<text class="no-data" x="{LEFT}" y="{y + 4}" fill="#666">'
                         f"no {what} data</text>")
            continue
        parts += [f'<circle class="run" cx="{_x(v, top):.1f}" cy="{y}" r="4" '
                  f'fill="{PALETTE[i % len(PALETTE)]}" fill-opacity="0.6"/>' for v in values[arm]]
        x = _x(quantile(values[arm], 0.5) or 0.0, top)
        parts.append(f'<line class="median" x1="{x:.1f}" y1="{y - 9}" x2="{x:.1f}" '
                     f'y2="{y + 9}" stroke="#222" stroke-width="2"/>')
    return _svg(chart_id, height, "".join(parts), f"{what} per run")


def _task_chart(arms: Sequence[str], tasks: Sequence[str], rows: Sequence[dict[str, Any]]
                ) -> str:
    cell_w = max(40, min(120, (WIDTH - LEFT - 20) // max(1, len(tasks))))
    height = 40 + ROW * len(arms)
    parts = [f'<text x="{LEFT + j * cell_w + cell_w / 2}" y="14" text-anchor="middle">'
             f"{escape(task[:14])}</text>" for j, task in enumerate(tasks)]
    for i, arm in enumerate(arms):
        y = 22 + i * ROW
        parts.append(_label(y + 10, arm))
        for j, task in enumerate(tasks):
            runs = [r for r in rows if r["arm"] == arm and r["task"] == task]
            rate = sum(r["passed"] for r in runs) / len(runs) if runs else None
            fill = "#ddd" if rate is None else f"hsl({rate * 120:.0f},60%,55%)"
            text = "-" if rate is None else f"{rate:.0%}"
            x = LEFT + j * cell_w
            parts.append(f'<rect class="cell" x="{x}" y="{y}" width="{cell_w - 2}" '
                         f'height="{ROW - 4}" fill="{fill}"/><text x="{x + cell_w / 2}" '
                         f'y="{y + 16}" text-anchor="middle">{text}</text>')
    return _svg("chart-tasks", height, "".join(parts), "pass rate per task and arm")


def _runs_table(rows: Sequence[dict[str, Any]]) -> str:
    header = ["arm", "task", "repeat", "passed", "exit", "latency s", "cost", "tools",
              "session", "answer"]
    cells = [[r["arm"], r["task"], r["repeat"], "yes" if r["passed"] else "no",
              r["exit_reason"], f"{r['latency_total']:.2f}",
              "-" if r["cost"] is None else f"${r['cost']:.6f}", ", ".join(r["tool_names"]),
              (r["session_id"] or "")[:12], (r["answer"] or r["error"] or "")[:300]]
             for r in rows]
    return _html_table(header, cells)
