"""The dashboard's Experiments page in the real Chromium and over real HTTP: the list as
``hermes ab list`` reads it, an experiment's table as ``hermes ab show`` prints it and the
charts of ``hermes ab report`` (the same SVG), model text escaped, a profile's token kept
off another profile's experiments."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard_support import Dashboard, browser_page, dashboard_for, screenshot
from hermes.dashboard.tokens import Tokens
from hermes.experiments.arms import Arm
from hermes.experiments.report import render_report
from hermes.experiments.results import RunRecord, cell_key, open_results
from hermes.experiments.store import RunSettings, create_experiment, open_experiment
from hermes.experiments.tasks import Task
from hermes.home import home_for

INJECTED = "<script>alert('answer')</script>"
CHARTS = ("chart-pass-rate", "chart-latency", "chart-cost", "chart-tasks")


def make_experiment(root: Path, profile: str = "default") -> str:
    """Arm a passes 3 of 4 tasks in 1..4 s at $0.001, arm b passes 1 in 11..14 s at
    $0.002; a's first answer carries a script tag."""
    home = home_for(root, profile)
    tasks = [Task(id=f"t{i}", prompt=f"task {i}") for i in range(4)]
    arms = [(Arm("a", profile, ("provider.model=a",)), "provider:\n  model: a\n"),
            (Arm("b", profile, ("provider.model=b",)), "provider:\n  model: b\n")]
    experiment = create_experiment(home, arms, tasks, RunSettings())
    with open_results(experiment.results_db) as results:
        for i in range(4):
            for index, arm in enumerate(("a", "b")):
                passed = i != 3 if arm == "a" else i == 0
                latency = (1.0 if arm == "a" else 11.0) + i
                results.add(RunRecord(
                    cell=cell_key(index, f"t{i}", 1), arm_index=index, arm=arm, task=f"t{i}",
                    repeat=1, exit_reason="completed", passed=passed,
                    answer=INJECTED if (arm, i) == ("a", 0) else f"answer {i}",
                    latency_first_token=latency / 2, latency_total=latency,
                    input_tokens=100, output_tokens=50, cost=0.001 * (index + 1),
                    tool_calls=1, tool_names=["read_file"], iterations=1,
                    session_id=f"s{arm}{i}"))
    return experiment.id


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    def prepare(environ: dict[str, str]) -> None:
        root = Path(environ["HOME"]) / ".hermes"
        make_experiment(root)
        make_experiment(root, "work")

    with dashboard_for(tmp_path_factory.mktemp("board"), profiles=("work",),
                       prepare=prepare) as running:
        yield running


def ids(board: Dashboard, profile: str = "default") -> list[str]:
    home = board.root if profile == "default" else board.root / "profiles" / profile
    return sorted(p.name for p in (home / "experiments").iterdir())


def svg_of(text: str, chart: str) -> str:
    found = re.search(f'<svg id="{chart}".*?</svg>', text, re.S)
    assert found, text[:2000]
    return found[0]


@pytest.mark.chromium
def test_an_experiment_shows_its_table_and_the_reports_charts(board: Dashboard,
                                                             chromium: str) -> None:
    (experiment_id,) = ids(board)
    shown = subprocess.run([sys.executable, "-m", "hermes", "ab", "show", experiment_id],
                           env=board.environ, capture_output=True, text=True, timeout=120)
    a_row = next(line for line in shown.stdout.splitlines() if line.startswith("│ a "))
    a_cells = [c.strip() for c in a_row.strip("│").split("│")]
    with browser_page(chromium, board) as page:
        page.goto(board.url("/p/default/experiments"))
        assert "a, b" in page.inner_text(f"#exp-{experiment_id}")
        page.click(f"#exp-{experiment_id} a")
        cells = [c.strip() for c in page.locator(".exp-figures tbody tr").first
                 .locator("th, td").all_inner_texts()]
        assert cells == a_cells
        for chart in CHARTS:
            assert page.locator(f"svg#{chart}").is_visible()
        assert page.locator(".exp-runs").get_by_text(INJECTED).count() == 1  # shown as text
        assert page.evaluate("document.querySelectorAll('main script').length") == 0
        screenshot(page, "experiment")


def test_the_charts_are_the_reports_own(board: Dashboard) -> None:
    (experiment_id,) = ids(board)
    with board.client() as client:
        page = client.get(f"/p/default/experiments/{experiment_id}")
    assert page.status_code == 200, page.text
    report = render_report(open_experiment(home_for(board.root, "default"), experiment_id))
    for chart in CHARTS:
        assert svg_of(page.text, chart) == svg_of(report, chart)
    assert INJECTED not in page.text and "&lt;script&gt;alert(" in page.text


def test_a_profiles_token_sees_only_its_own_experiments(board: Dashboard) -> None:
    (default_id,) = ids(board)
    (work_id,) = ids(board, "work")
    as_work = {"Authorization": f"Bearer {Tokens(board.root).profile_token('work')}"}
    with board.client(logged_in=False) as client:
        own = client.get("/p/work/experiments", headers=as_work)
        assert own.status_code == 200 and work_id in own.text and default_id not in own.text
        for path in ("/p/default/experiments", f"/p/default/experiments/{default_id}"):
            assert client.get(path, headers=as_work).status_code == 403
        answer: Any = client.get(f"/p/work/experiments/{default_id}", headers=as_work)
        assert answer.status_code == 404  # default's experiment is none of work's
        assert client.get("/p/work/experiments/..%2Fexperiments",
                          headers=as_work).status_code == 404
