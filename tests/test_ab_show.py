"""`hermes ab show` and `hermes ab report` on an experiment with known runs: the table's
figures and intervals, the plain-words tests, and the HTML page in headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ok
from hermes.experiments.arms import Arm
from hermes.experiments.results import RunRecord, cell_key, open_results
from hermes.experiments.store import RunSettings, create_experiment
from hermes.experiments.tasks import Task
from hermes.home import home_for

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


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


def _record(arm_index: int, arm: str, i: int, *, passed: bool, latency: float, cost: float,
            tokens: tuple[int, int], tools: list[str]) -> RunRecord:
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

    rows = list(csv.reader(io.StringIO(ok(hermes("ab", "show", known, "--format", "csv")))))
    assert rows[0][:3] == ["arm", "runs", "pass rate [95% CI]"]
    assert rows[2][:3] == ["b", "10", "10% [2%–40%]"]
    md = ok(hermes("ab", "show", known, "--format", "md"))
    assert md.startswith("| arm | runs |") and "| a | 10 | 90% [60%–98%] * |" in md


def test_html_report_renders_its_charts_offline_in_chromium(hermes, known: str, root: Path,
                                                             tmp_path: Path) -> None:
    path = Path(ok(hermes("ab", "report", known)).strip())
    assert path == root / "experiments" / known / "report.html"
    html = path.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched from anywhere
    profile = tmp_path / "chromium-profile"
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--window-size=1100,2200"]
    dom = subprocess.run([*flags, "--dump-dom", path.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    charts = re.findall(r'<svg id="(chart-[\w-]+)"', dom)
    assert charts == ["chart-pass-rate", "chart-latency", "chart-cost", "chart-tasks"]
    latency = dom.split('id="chart-latency"')[1].split("</svg>")[0]
    assert latency.count('class="run"') == 20 and latency.count('class="median"') == 2
    assert dom.count('class="bar"') == 2 and dom.count('class="interval"') == 2
    assert dom.count('class="cell"') == 20
    shot = tmp_path / "report.png"
    subprocess.run([*flags, f"--screenshot={shot}", path.as_uri()], capture_output=True,
                   timeout=120, check=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


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
