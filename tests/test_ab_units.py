"""`hermes ab` building blocks: sweep expansion, tasks files, expectations, statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes.config.sweeps import expand_sweeps
from hermes.environments.local import LocalEnvironment
from hermes.errors import ConfigError
from hermes.experiments.arms import plan_arms
from hermes.experiments.expectations import Observed, evaluate
from hermes.experiments.judge import parse_verdict
from hermes.experiments.stats import mann_whitney, mcnemar_exact, quantile, wilson
from hermes.experiments.tasks import Task, read_tasks
from hermes.home import home_for


def test_sweeps_expand_to_the_cross_product_in_hydra_order() -> None:
    runs = expand_sweeps(["provider=openai,anthropic", "provider.model=a,b", "agent.x=1"])
    assert runs == [
        ["provider=openai", "provider.model=a", "agent.x=1"],
        ["provider=openai", "provider.model=b", "agent.x=1"],
        ["provider=anthropic", "provider.model=a", "agent.x=1"],
        ["provider=anthropic", "provider.model=b", "agent.x=1"],
    ]
    assert expand_sweeps([]) == [[]]
    assert expand_sweeps(["agent.max_iterations=range(1,4)"]) == [
        ["agent.max_iterations=1"], ["agent.max_iterations=2"], ["agent.max_iterations=3"]]
    # Hydra's grammar, not string splitting: a quoted comma is one value; + and ~ kept.
    assert expand_sweeps(["agent.personality='a, b'", "+x.y=1,2", "~agent.z"]) == [
        ["agent.personality='a, b'", "+x.y=1", "~agent.z"],
        ["agent.personality='a, b'", "+x.y=2", "~agent.z"]]


@pytest.mark.parametrize(("words", "fragment"), [
    (["provider.model=[a"], "bad override 'provider.model=[a'"),
    (["toolsets=glob(*)"], "only lists (a,b) and range"),
    (["a=1,2", "a=3"], "'a' is given twice"),
])
def test_bad_sweeps_are_named(words: list[str], fragment: str) -> None:
    with pytest.raises(ConfigError, match="command line") as caught:
        expand_sweeps(words)
    assert fragment in str(caught.value)


def test_arms_are_named_by_what_varies() -> None:
    arms = plan_arms(["default"], ["provider.model=a,b", "agent.max_iterations=3"])
    assert [a.name for a in arms] == ["provider.model=a", "provider.model=b"]
    assert arms[0].overrides == ("provider.model=a", "agent.max_iterations=3")
    both = plan_arms(["work", "home", "work"], [])
    assert [(a.name, a.profile, a.overrides) for a in both] == [("work", "work", ()),
                                                                ("home", "home", ())]


def test_every_bad_task_line_is_reported_with_its_number(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "ok", "prompt": "hi", "expect": {"contains": "x"}}),
        "{not json",
        json.dumps({"id": "ok", "prompt": "again"}),
        json.dumps({"id": "r", "prompt": "x", "expect": {"regex": "("}}),
        json.dumps({"id": "s", "prompt": "x", "expect": {"json_schema": {"type": 5}}}),
        json.dumps({"id": "f", "prompt": "x", "files": {"../up": "x"}}),
        json.dumps({"id": "k", "prompt": "x", "expect": {"contians": "x"}}),
        "",
        json.dumps(["a list"]),
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    tasks, problems = read_tasks(path)
    assert [t.id for t in tasks] == ["ok"]
    assert [p.split(":")[1] for p in problems] == ["2", "3", "4", "5", "6", "7", "9"]
    assert "id 'ok' is also on line 1" in problems[1]
    assert "not a regular expression" in problems[2]
    assert "not a JSON schema" in problems[3]
    assert "inside the working directory" in problems[4]
    assert "expect.contians: Extra inputs are not permitted" in problems[5]


def _observed(tmp_path: Path, answer: str, tools: list[str] | None = None,
              cost: float | None = 0.002, latency: float = 1.5) -> Observed:
    home = home_for(tmp_path / "user" / ".hermes", "work").ensure()
    shell = LocalEnvironment(home, str(tmp_path), 60, {"PATH": "/usr/bin:/bin",
                                                       "HOME": str(tmp_path / "user")})
    return Observed(answer, tools or [], cost, latency, shell)


def test_each_expectation_kind_passes_and_fails_correctly(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("alpha\n")
    task = Task.model_validate({"id": "t", "prompt": "p", "expect": {
        "contains": ["42", "answer"], "regex": r"\b42\b",
        "json_schema": {"type": "object", "required": ["answer"],
                        "properties": {"answer": {"type": "integer"}}},
        "tool_called": "read_file", "tool_not_called": ["terminal"],
        "shell": "grep -q alpha out.txt", "max_cost": 0.01, "max_latency": 2}})
    good = evaluate(task, _observed(tmp_path, '```json\n{"answer": 42}\n```', ["read_file"]),
                    None)
    assert {k: v["passed"] for k, v in good.items()} == dict.fromkeys(
        ["contains", "regex", "json_schema", "tool_called", "tool_not_called", "shell",
         "max_cost", "max_latency"], True)
    (tmp_path / "out.txt").write_text("beta\n")
    bad = evaluate(task, _observed(tmp_path, '{"answer": "42"}', ["terminal"], cost=0.5,
                                   latency=3), None)
    assert {k: v["passed"] for k, v in bad.items()} == {
        "contains": True, "regex": True, "json_schema": False, "tool_called": False,
        "tool_not_called": False, "shell": False, "max_cost": False, "max_latency": False}
    assert bad["json_schema"]["detail"] == "answer: '42' is not of type 'integer'"
    assert bad["tool_not_called"]["detail"] == "called: terminal"
    assert bad["shell"]["detail"] == "exit 1"
    unknown = evaluate(task, _observed(tmp_path, "42 answer", cost=None), None)
    assert unknown["max_cost"] == {"passed": False,
                                   "detail": "cost unknown (no price for this model)"}
    assert unknown["json_schema"]["passed"] is False


def test_rubrics_go_to_the_judge_and_keep_its_reason(tmp_path: Path) -> None:
    task = Task.model_validate({"id": "t", "prompt": "2+2?", "expect": {"rubric": "says 4"}})
    asked: list[tuple[str, str, str]] = []

    def judge(rubric: str, prompt: str, answer: str) -> tuple[str, str]:
        asked.append((rubric, prompt, answer))
        return ("pass", "it says 4") if "4" in answer else ("fail", "no 4")

    assert evaluate(task, _observed(tmp_path, "4"), judge)["rubric"] == {
        "passed": True, "detail": "it says 4", "verdict": "pass", "reason": "it says 4"}
    assert evaluate(task, _observed(tmp_path, "5"), judge)["rubric"]["passed"] is False
    assert asked[0] == ("says 4", "2+2?", "4")
    assert evaluate(task, _observed(tmp_path, "4"), None)["rubric"]["passed"] is False
    assert parse_verdict('```json\n{"verdict": "PASS", "reason": "ok"}\n```') == ("pass", "ok")
    assert parse_verdict("I think it passes")[0] == "fail"


def test_wilson_interval_known_values() -> None:
    # statsmodels.stats.proportion.proportion_confint(8, 10, method="wilson")
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4901625, abs=1e-7)
    assert high == pytest.approx(0.9433178, abs=1e-7)
    assert wilson(0, 10) == (0.0, pytest.approx(0.2775328, abs=1e-7))
    assert wilson(10, 10) == (pytest.approx(0.7224672, abs=1e-7), 1.0)
    assert wilson(0, 0) == (0.0, 1.0)


def test_mcnemar_exact_known_values() -> None:
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)  # 2·P(X≤1), X~Bin(10, ½)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


def test_mann_whitney_known_values() -> None:
    # scipy's example: U=17, exact p = 2·7/126 (7 of the C(9,4) orders give U ≤ 3).
    exact = mann_whitney([19, 22, 16, 29, 24], [20, 11, 17, 12])
    assert (exact.u, exact.method) == (17.0, "exact")
    assert exact.p == pytest.approx(14 / 126)
    # Ties: normal approximation with tie and continuity corrections. Ranks 1,3,3,5.5 of
    # the first sample give U=2.5; σ² = 16/12·(9 − 30/56); z = (13.5 − 8 − 0.5)/σ.
    tied = mann_whitney([1, 2, 2, 3], [2, 3, 4, 5])
    assert (tied.u, tied.method) == (2.5, "asymptotic")
    assert tied.p == pytest.approx(0.1366582, abs=1e-6)
    far = mann_whitney(list(range(10)), list(range(10, 20)))
    assert far.u == 0 and far.p == pytest.approx(0.000182672, rel=1e-4)


def test_quantiles_interpolate_like_numpy() -> None:
    assert quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9) == pytest.approx(9.1)
    assert quantile([3, 1, 2], 0.5) == 2
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([], 0.5) is None
