"""The comparison ``hermes ab show`` prints: one summary per arm, the best per column,
and for two arms whether their differences are real, in plain words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hermes.experiments.stats import mann_whitney, mcnemar_exact, mean, quantile, wilson

ALPHA = 0.05
BETTER: dict[str, str] = {"pass_rate": "max", "latency_median": "min", "latency_p90": "min",
                          "cost_mean": "min", "tokens_mean": "min", "tool_calls_mean": "min"}
"""Columns with a best arm, and which way is better."""


@dataclass(frozen=True)
class ArmSummary:
    arm: str
    runs: int
    passes: int
    pass_rate: float | None
    pass_low: float
    pass_high: float
    latency_median: float | None
    latency_p90: float | None
    first_token_median: float | None
    cost_mean: float | None
    tokens_mean: float | None
    tool_calls_mean: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarise(arm: str, rows: Sequence[dict[str, Any]]) -> ArmSummary:
    passes = sum(1 for r in rows if r["passed"])
    latencies = [r["latency_total"] for r in rows]
    first = [r["latency_first_token"] for r in rows if r["latency_first_token"] is not None]
    costs = [r["cost"] for r in rows if r["cost"] is not None]
    low, high = wilson(passes, len(rows))
    return ArmSummary(
        arm, len(rows), passes, passes / len(rows) if rows else None, low, high,
        quantile(latencies, 0.5), quantile(latencies, 0.9), quantile(first, 0.5), mean(costs),
        mean([r["input_tokens"] + r["output_tokens"] for r in rows]),
        mean([r["tool_calls"] for r in rows]))


def summarise_all(arms: Sequence[str], rows: Sequence[dict[str, Any]]) -> list[ArmSummary]:
    return [summarise(arm, [r for r in rows if r["arm"] == arm]) for arm in arms]


def best(summaries: Sequence[ArmSummary]) -> dict[str, set[str]]:
    """The arm(s) best in each column (none when every arm ties or only one ran)."""
    found: dict[str, set[str]] = {}
    for column, way in BETTER.items():
        values = {s.arm: getattr(s, column) for s in summaries
                  if getattr(s, column) is not None}
        if len(values) < 2 or len(set(values.values())) < 2:
            continue
        target = max(values.values()) if way == "max" else min(values.values())
        found[column] = {arm for arm, value in values.items() if value == target}
    return found


@dataclass(frozen=True)
class Comparison:
    """Two arms' differences and their tests."""

    first: str
    second: str
    pairs: int
    only_first: int
    only_second: int
    pass_p: float
    latency_p: float
    cost_p: float | None
    sentences: list[str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def compare(first: str, second: str, rows: Sequence[dict[str, Any]]) -> Comparison:
    """McNemar on runs paired by (task, repeat); Mann–Whitney on latency and cost."""
    a = {(r["task"], r["repeat"]): r for r in rows if r["arm"] == first}
    b = {(r["task"], r["repeat"]): r for r in rows if r["arm"] == second}
    paired = sorted(set(a) & set(b))
    only_a = sum(1 for k in paired if a[k]["passed"] and not b[k]["passed"])
    only_b = sum(1 for k in paired if b[k]["passed"] and not a[k]["passed"])
    pass_p = mcnemar_exact(only_a, only_b)
    latency = mann_whitney([r["latency_total"] for r in a.values()],
                           [r["latency_total"] for r in b.values()])
    costs_a = [r["cost"] for r in a.values() if r["cost"] is not None]
    costs_b = [r["cost"] for r in b.values() if r["cost"] is not None]
    cost = mann_whitney(costs_a, costs_b) if costs_a and costs_b else None
    sentences = [
        _pass_sentence(first, second, only_a, only_b, len(paired), pass_p),
        _spread_sentence("latency", first, second, [r["latency_total"] for r in a.values()],
                         [r["latency_total"] for r in b.values()], latency.p, "slower"),
    ]
    if cost is not None:
        sentences.append(_spread_sentence("cost", first, second, costs_a, costs_b, cost.p,
                                          "more expensive"))
    return Comparison(first, second, len(paired), only_a, only_b, pass_p, latency.p,
                      cost.p if cost else None, sentences)


def _pass_sentence(first: str, second: str, only_a: int, only_b: int, pairs: int,
                   p: float) -> str:
    if only_a == only_b:
        return (f"Pass rate: no difference between {first} and {second} on {pairs} paired "
                f"runs (McNemar p={p:.3g}).")
    winner, loser = (first, second) if only_a > only_b else (second, first)
    wins, losses = max(only_a, only_b), min(only_a, only_b)
    verdict = ("the difference is significant" if p < ALPHA
               else "the difference could be chance; run more tasks or --repeat")
    return (f"Pass rate: {winner} passed {wins} paired runs that {loser} failed, and lost "
            f"{losses} — {verdict} (McNemar exact p={p:.3g}, {pairs} pairs).")


def _spread_sentence(what: str, first: str, second: str, a: list[float], b: list[float],
                     p: float, worse: str) -> str:
    median_a, median_b = quantile(a, 0.5) or 0.0, quantile(b, 0.5) or 0.0
    if median_a == median_b:
        return f"{what.capitalize()}: the medians are equal (Mann–Whitney p={p:.3g})."
    slow, fast = (first, second) if median_a > median_b else (second, first)
    verdict = "the difference is significant" if p < ALPHA else "the difference could be chance"
    return (f"{what.capitalize()}: {slow} is {worse} than {fast} (medians "
            f"{_fmt(what, median_a)} vs {_fmt(what, median_b)}) — {verdict} "
            f"(Mann–Whitney p={p:.3g}).")


def _fmt(what: str, value: float) -> str:
    return f"{value:.3g} s" if what == "latency" else f"${value:.6f}"
