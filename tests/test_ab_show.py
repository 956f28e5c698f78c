"""`hermes ab show` and `hermes ab report` on an experiment with known runs: the table's
figures and intervals, the plain-words tests, and the HTML page in headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from conftest import ok
from hermes.experiments.arms import Arm
from hermes.experiments.results import RunRecord, cell_key, open_results
from hermes.experiments.store import RunSettings, create_experiment
from hermes.experiments.tasks import Task
from hermes.home import home_for

REPO = Path(__file__).resolve().parent.parent
MEASURE = """<script>
const clipped = [];
for (const svg of document.querySelectorAll("svg.chart")) {
  const box = svg.getBoundingClientRect();
  for (const text of svg.querySelectorAll("text")) {
    const r = text.getBoundingClientRect();
    if (r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom)
      clipped.push(svg.id + ": " + text.textContent);
  }
}
const pre = document.createElement("pre");
pre.id = "clipped";
pre.textContent = JSON.stringify(clipped);
document.body.appendChild(pre);
</script>"""
"""Appended to a copy of a report: lists every chart text Chromium lays out beyond its
chart (drawn clipped)."""


def render_in_chromium(chromium: str, page: Path, tmp_path: Path, *extra: str) -> str:
    """The DOM of ``page`` after headless Chromium laid it out (and ran its scripts)."""
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1100,2200"]
    return subprocess.run([*flags, *extra, "--dump-dom", page.as_uri()], capture_output=True,
                          text=True, timeout=120, check=True).stdout


def clipped_texts(chromium: str, report: Path, tmp_path: Path) -> list[str]:
    measured = tmp_path / "measured.html"
    measured.write_text(report.read_text().replace("</body>", MEASURE + "</body>"))
    dom = render_in_chromium(chromium, measured, tmp_path)
    found = re.search(r'<pre id="clipped">(.*?)</pre>', dom)
    assert found is not None, dom[-2000:]
    return list(json.loads(unescape(found.group(1))))


@pytest.fixture
def known(root: Path) -> str:
    """Arm a passes 9 of 10 tasks in 1..10 s at $0.001; arm b passes 1 (t0) in 11..20 s
    at $0.002."""
    home = home_for(root, "default")
    root.mkdir(parents=True)
    tasks = [Task(id=f"t{i}", prompt=f"task {i}") for i in range(10)]
    arms = [(Arm("a", "default", ("provider.model=a",)), "provider:\n  model: a\n"),
            (Arm("b", "default", ("provider.model=b",)), "provider:\n  model: b\n")]
    experiment = create_experiment(home, arms, tasks, RunSettings())
    with open_results(experiment.results_db) as results:
        for i in range(10):
            results.add(_record(0, "a", i, passed=i != 9, latency=1.0 + i, cost=0.001,
                                tokens=(100, 50), tools=["read_file"]))
            results.add(_record(1, "b", i, passed=i == 0, latency=11.0 + i, cost=0.002,
                                tokens=(200, 100), tools=[]))
    return experiment.id


def _record(arm_index: int, arm: str, i: int, *, passed: bool, latency: float,
            cost: float | None, tokens: tuple[int, int], tools: list[str]) -> RunRecord:
    return RunRecord(cell=cell_key(arm_index, f"t{i}", 1), arm_index=arm_index, arm=arm,
                     task=f"t{i}", repeat=1, exit_reason="completed", passed=passed,
                     answer=f"answer {i}", latency_first_token=latency / 2,
                     latency_total=latency, input_tokens=tokens[0], output_tokens=tokens[1],
                     cost=cost, tool_calls=len(tools), tool_names=tools, iterations=1,
                     session_id=f"s{arm}{i}")


def test_table_figures_and_intervals_from_known_runs(hermes, known: str) -> None:
    table = ok(hermes("ab", "show", known))
    a_row = next(line for line in table.splitlines() if line.startswith("│ a "))
    cells = [c.strip() for c in a_row.strip("│").split("│")]
    assert cells == ["a", "10", "90% [60%–98%] *", "5.50 s *", "9.10 s *", "2.75 s",
                     "$0.001000 *", "150 *", "1.0"]
    assert "10% [2%–40%]" in table and "15.50 s" in table and "19.10 s" in table
    assert "0.0 *" in table  # b calls fewer tools
    assert ("Pass rate: a passed 8 paired runs that b failed, and lost 0 — the difference "
            "is significant (McNemar exact p=0.00781, 10 pairs).") in table
    assert ("Latency: b is slower than a (medians 5.5 s vs 15.5 s) — the difference is "
            "significant (Mann–Whitney p=0.000183).") in table
    assert "Cost: b is more expensive than a (medians $0.001000 vs $0.002000) — the " \
        "difference is significant" in table

    data = json.loads(ok(hermes("ab", "show", known, "--format", "json")))
    a, b = data["arms"]
    assert (a["passes"], a["runs"], b["passes"]) == (9, 10, 1)
    assert a["pass_low"] == pytest.approx(0.5958499, abs=1e-6)
    assert a["pass_high"] == pytest.approx(0.9821238, abs=1e-6)
    assert b["pass_low"] == pytest.approx(1 - a["pass_high"])
    assert (b["latency_median"], b["latency_p90"]) == (15.5, pytest.approx(19.1))
    assert data["comparison"]["pass_p"] == 2 / 256
    assert data["comparison"]["latency_p"] == pytest.approx(0.000182672, rel=1e-4)
    assert data["best"]["pass_rate"] == ["a"] and data["best"]["tool_calls_mean"] == ["b"]

    text = ok(hermes("ab", "show", known, "--format", "csv"))
    assert text.splitlines()[0] == (
        "arm,runs,passes,pass_rate,pass_low,pass_high,latency_median,latency_p90,"
        "first_token_median,cost_mean,tokens_mean,tool_calls_mean,best")
    rows = {row["arm"]: row for row in csv.DictReader(io.StringIO(text))}
    a_csv, b_csv = rows["a"], rows["b"]
    for column in ("runs", "passes", "pass_rate", "pass_low", "pass_high", "latency_median",
                   "latency_p90", "first_token_median", "cost_mean", "tokens_mean",
                   "tool_calls_mean"):  # the same raw numbers as the JSON
        assert float(a_csv[column]) == pytest.approx(a[column], rel=1e-12), column
        assert float(b_csv[column]) == pytest.approx(b[column], rel=1e-12), column
    assert (float(b_csv["pass_low"]), float(b_csv["latency_p90"])) == \
        (pytest.approx(0.0178762, abs=1e-6), pytest.approx(19.1))
    assert float(a_csv["cost_mean"]) == pytest.approx(0.001)
    assert a_csv["best"].split() == ["pass_rate", "latency_median", "latency_p90",
                                     "cost_mean", "tokens_mean"]
    assert b_csv["best"] == "tool_calls_mean"
    md = ok(hermes("ab", "show", known, "--format", "md"))
    assert md.startswith("| arm | runs |") and "| a | 10 | 90% [60%–98%] * |" in md


@pytest.mark.chromium
def test_html_report_renders_its_charts_offline_in_chromium(chromium: str, hermes, known: str,
                                                             root: Path, tmp_path: Path) -> None:
    path = Path(ok(hermes("ab", "report", known)).strip())
    assert path == root / "experiments" / known / "report.html"
    html = path.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched from anywhere
    dom = render_in_chromium(chromium, path, tmp_path)
    charts = re.findall(r'<svg id="(chart-[\w-]+)"', dom)
    assert charts == ["chart-pass-rate", "chart-latency", "chart-cost", "chart-tasks"]
    latency = dom.split('id="chart-latency"')[1].split("</svg>")[0]
    assert latency.count('class="run"') == 20 and latency.count('class="median"') == 2
    assert dom.count('class="bar"') == 2 and dom.count('class="interval"') == 2
    assert dom.count('class="cell"') == 20
    assert clipped_texts(chromium, path, tmp_path) == []
    shot = tmp_path / "report.png"
    render_in_chromium(chromium, path, tmp_path, f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


@pytest.fixture
def cheap(root: Path) -> str:
    """Arm "priced" costs $0.000075 or $0.00005 a run (gpt-4o's price for a few tokens);
    arm "unpriced" has no cost data (a model litellm has no price for)."""
    home = home_for(root, "default")
    root.mkdir(parents=True, exist_ok=True)
    tasks = [Task(id=f"t{i}", prompt=f"task {i}") for i in range(4)]
    arms = [(Arm("priced", "default"), "provider:\n  model: a\n"),
            (Arm("unpriced", "default"), "provider:\n  model: b\n")]
    experiment = create_experiment(home, arms, tasks, RunSettings())
    with open_results(experiment.results_db) as results:
        for i in range(4):
            results.add(_record(0, "priced", i, passed=True, latency=0.04, cost=7.5e-05 if i % 2
                                else 5e-05, tokens=(10, 5), tools=[]))
            results.add(_record(1, "unpriced", i, passed=True, latency=0.05, cost=None,
                                tokens=(10, 5), tools=[]))
    return experiment.id


def chart(html: str, chart_id: str) -> str:
    return html.split(f'id="{chart_id}"')[1].split("</svg>")[0]


def ticks(svg: str) -> list[str]:
    return [unescape(t) for t in re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg)]


def test_the_cost_axis_has_one_format_and_an_unpriced_arm_a_note(root: Path, cheap: str) -> None:
    from hermes.experiments.report import nice_ticks, render_report
    from hermes.experiments.store import open_experiment

    html = render_report(open_experiment(home_for(root, "default"), cheap))
    cost = chart(html, "chart-cost")
    assert ticks(cost) == ["$0.00000", "$0.00002", "$0.00004", "$0.00006", "$0.00008"]
    assert cost.count('class="run"') == 4 and cost.count('class="median"') == 1
    assert cost.count("no cost data") == 1 and "no cost data" in cost.split(">unpriced<")[1]
    assert "no latency data" not in chart(html, "chart-latency")
    assert nice_ticks(0.002) == ([0.0, 0.0005, 0.001, 0.0015, 0.002], 4)
    assert nice_ticks(19.1) == ([0, 5, 10, 15, 20], 0)
    assert nice_ticks(0.3) == ([0.0, 0.1, 0.2, 0.3], 1)


def test_a_report_without_any_cost_data_draws_no_empty_axis(root: Path) -> None:
    from hermes.experiments.report import render_report

    home = home_for(root, "default")
    root.mkdir(parents=True)
    experiment = create_experiment(home, [(Arm("x", "default"), "a: 1\n")],
                                   [Task(id="t", prompt="p")], RunSettings())
    with open_results(experiment.results_db) as results:
        results.add(_record(0, "x", 0, passed=True, latency=0.04, cost=None, tokens=(1, 1),
                            tools=[]))
    cost = chart(render_report(experiment), "chart-cost")
    assert ticks(cost) == [] and "$" not in cost and cost.count("no cost data") == 1


@pytest.mark.chromium
def test_chromium_lays_every_chart_label_inside_its_chart(chromium: str, hermes, cheap: str,
                                                         tmp_path: Path) -> None:
    report = Path(ok(hermes("ab", "report", cheap)).strip())
    assert clipped_texts(chromium, report, tmp_path) == []
    dom = render_in_chromium(chromium, report, tmp_path)
    assert ticks(chart(dom, "chart-cost"))[-1] == "$0.00008"
    assert "no cost data" in chart(dom, "chart-cost")


def test_without_chromium_the_report_tests_skip_and_fail_only_on_ci(tmp_path: Path) -> None:
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    command = [sys.executable, "-m", "pytest", f"{__file__}::test_html_report_renders_its_"
               "charts_offline_in_chromium", "-q", "-rs", "-p", "no:cacheprovider"]
    local = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout[-2000:]
    assert "Chromium is not installed (apt-get install chromium)" in local.stdout
    on_ci = subprocess.run(command, env=env | {"CI": "1"}, cwd=REPO, capture_output=True,
                           text=True, timeout=300)
    assert on_ci.returncode == 1 and "1 error" in on_ci.stdout, on_ci.stdout[-2000:]
    assert "CI must render the report" in on_ci.stdout


MANAGEMENT = """
import sys
from hermes.cli.main import run
for args in (["ab", "list"], ["ab", "show", ID], ["ab", "show", ID, "--format", "json"],
             ["ab", "report", ID], ["ab", "diff", ID, ID]):
    try:
        run(args)
    except SystemExit as exc:
        assert not exc.code, (args, exc.code)
assert "litellm" not in sys.modules, "litellm imported"
assert "hydra" not in sys.modules, "hydra imported"
"""


def test_reading_experiments_imports_neither_litellm_nor_hydra(environ, known: str) -> None:
    proc = subprocess.run([sys.executable, "-c", MANAGEMENT.replace("ID", repr(known))],
                          env=environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert known in proc.stdout
