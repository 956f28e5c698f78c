"""``results.db``: one row per finished run (arm × task × repeat), keyed by its cell.

Only the main thread writes (runs hand their records back), and the primary key
``cell`` makes a duplicate row impossible: resume runs only the missing cells.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes.experiments.tasks import Expectations

CHECKS = tuple(Expectations.model_fields)
"""Expectation kinds; each has a column ``check_<kind>`` (1 pass, 0 fail, NULL not asked)."""


def cell_key(arm_index: int, task_id: str, repeat: int) -> str:
    return f"{arm_index + 1}/{task_id}/{repeat}"


@dataclass(frozen=True)
class RunRecord:
    """What one run did and how it scored."""

    cell: str
    arm_index: int
    arm: str
    task: str
    repeat: int
    exit_reason: str
    """completed, budget_exhausted, interrupted, error or timeout."""
    passed: bool
    answer: str = ""
    error: str | None = None
    latency_first_token: float | None = None
    latency_total: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    tool_calls: int = 0
    tool_names: list[str] = field(default_factory=list)
    iterations: int = 0
    session_id: str | None = None
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each expectation asked: ``{"passed": bool, "detail": str}``."""
    judge_verdict: str | None = None
    judge_reason: str | None = None
    started_at: float = 0.0

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["passed"] = int(self.passed)
        row["tool_names"] = json.dumps(self.tool_names)
        row["checks"] = json.dumps(self.checks, sort_keys=True)
        for kind in CHECKS:
            check = self.checks.get(kind)
            row[f"check_{kind}"] = None if check is None else int(bool(check["passed"]))
        return row


COLUMNS: dict[str, type] = {
    "cell": str, "arm_index": int, "arm": str, "task": str, "repeat": int,
    "exit_reason": str, "passed": int, "answer": str, "error": str,
    "latency_first_token": float, "latency_total": float, "input_tokens": int,
    "output_tokens": int, "cached_tokens": int, "cost": float, "tool_calls": int,
    "tool_names": str, "iterations": int, "session_id": str, "checks": str,
    "judge_verdict": str, "judge_reason": str, "started_at": float,
    **{f"check_{kind}": int for kind in CHECKS},
}


@contextmanager
def open_results(path: Path) -> Iterator[Results]:
    results = Results(path)
    try:
        yield results
    finally:
        results.close()


class Results:
    """The ``runs`` table of one experiment."""

    def __init__(self, path: Path):
        import sqlite_utils

        self.conn = sqlite3.connect(path, isolation_level=None)
        self.db = sqlite_utils.Database(self.conn, execute_plugins=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db["runs"].create(COLUMNS, pk="cell", if_not_exists=True,  # type: ignore[union-attr]
                               not_null={"cell", "arm", "task", "exit_reason", "passed"})

    def close(self) -> None:
        self.conn.close()

    def add(self, record: RunRecord) -> None:
        """Insert one run; a second row for the same cell is an error (IntegrityError)."""
        with self.conn:
            self.db["runs"].insert(record.to_row())  # type: ignore[union-attr]

    def rows(self) -> list[dict[str, Any]]:
        """Every run, in cell order, with JSON columns decoded."""
        found = []
        for row in self.db["runs"].rows_where(order_by="arm_index, task, repeat"):
            row = dict(row)
            row["tool_names"] = json.loads(row["tool_names"] or "[]")
            row["checks"] = json.loads(row["checks"] or "{}")
            row["passed"] = bool(row["passed"])
            found.append(row)
        return found

    def done(self) -> set[str]:
        return {row[0] for row in self.conn.execute("select cell from runs")}

    def spent(self) -> float:
        (total,) = self.conn.execute("select coalesce(sum(cost), 0) from runs").fetchone()
        return float(total)
