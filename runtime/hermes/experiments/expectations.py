"""Scoring one run against its task's expectations.

Each kind asked gives ``{"passed": bool, "detail": str}``; a run passes when it
completed and every expectation passed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes.environments.base import Environment
from hermes.errors import SandboxError
from hermes.experiments.tasks import Expectations, Task

SHELL_TIMEOUT = 60.0

Judge = Callable[[str, str, str], tuple[str, str]]
"""``judge(rubric, prompt, answer) -> (verdict, reason)``; verdict ``pass`` or ``fail``."""


@dataclass(frozen=True)
class Observed:
    """What a run produced, as the expectations see it."""

    answer: str
    tool_names: list[str]
    cost: float | None
    latency: float
    shell: Environment
    """Where ``expect.shell`` runs: the arm's local environment in the run's working
    directory, confined by its sandbox like the agent's own commands."""


def evaluate(task: Task, seen: Observed, judge: Judge | None) -> dict[str, dict[str, Any]]:
    """Every expectation of ``task`` checked against ``seen``, by kind."""
    expect = task.expect
    checks: dict[str, dict[str, Any]] = {}
    for kind in expect.kinds():
        if kind == "rubric":
            checks[kind] = _rubric(expect, task.prompt, seen.answer, judge)
        else:
            passed, detail = CHECKERS[kind](expect, seen)
            checks[kind] = {"passed": passed, "detail": detail}
    return checks


def _contains(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    missing = [text for text in expect.contains if text not in seen.answer]
    return not missing, f"missing {missing!r}" if missing else "all present"


def _regex(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    assert expect.regex is not None
    match = re.search(expect.regex, seen.answer)
    return match is not None, f"matched {match.group(0)!r}" if match else "no match"


def _json_schema(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    from jsonschema import Draft202012Validator

    try:
        value = json.loads(_strip_fence(seen.answer))
    except ValueError as exc:
        return False, f"the answer is not JSON: {exc}"
    errors = sorted(Draft202012Validator(expect.json_schema or {}).iter_errors(value),
                    key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        return False, f"{where}: {errors[0].message}"
    return True, "valid"


def _strip_fence(text: str) -> str:
    """A JSON answer wrapped in a Markdown code fence counts as JSON."""
    match = re.fullmatch(r"\s*```(?:json)?\s*\n(.*?)\n?```\s*", text, re.DOTALL)
    return match.group(1) if match else text


def _tool_called(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    missing = [name for name in expect.tool_called if name not in seen.tool_names]
    return not missing, f"not called: {', '.join(missing)}" if missing else "called"


def _tool_not_called(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    called = [name for name in expect.tool_not_called if name in seen.tool_names]
    return not called, f"called: {', '.join(called)}" if called else "not called"


def _shell(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    assert expect.shell is not None
    try:
        done = seen.shell.run(expect.shell, timeout=SHELL_TIMEOUT)
    except SandboxError as exc:
        return False, f"could not run: {exc}"
    if done.timed_out:
        return False, f"timed out after {SHELL_TIMEOUT:.0f} s"
    output = done.output.strip()[-200:]
    return done.exit_code == 0, f"exit {done.exit_code}" + (f": {output}" if output else "")


def _max_cost(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    assert expect.max_cost is not None
    if seen.cost is None:
        return False, "cost unknown (no price for this model)"
    return seen.cost <= expect.max_cost, f"${seen.cost:.6f} (max ${expect.max_cost})"


def _max_latency(expect: Expectations, seen: Observed) -> tuple[bool, str]:
    assert expect.max_latency is not None
    return seen.latency <= expect.max_latency, f"{seen.latency:.2f} s (max {expect.max_latency} s)"


def _rubric(expect: Expectations, prompt: str, answer: str, judge: Judge | None
            ) -> dict[str, Any]:
    assert expect.rubric is not None
    if judge is None:
        return {"passed": False, "detail": "no judge model (--judge-model)",
                "verdict": None, "reason": None}
    verdict, reason = judge(expect.rubric, prompt, answer)
    return {"passed": verdict == "pass", "detail": reason, "verdict": verdict, "reason": reason}


CHECKERS: dict[str, Callable[[Expectations, Observed], tuple[bool, str]]] = {
    "contains": _contains, "regex": _regex, "json_schema": _json_schema,
    "tool_called": _tool_called, "tool_not_called": _tool_not_called, "shell": _shell,
    "max_cost": _max_cost, "max_latency": _max_latency,
}
