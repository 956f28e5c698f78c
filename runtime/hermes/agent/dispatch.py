"""Run one model turn's tool calls: concurrently where safe, results in call order.

Calls are cut into batches in order. Parallel-safe tools (readers) join the
current batch; a writer with a ``path`` joins it only if no other writer in the
batch touches the same path; anything else runs alone. Batches run one after
another, the calls of a batch concurrently, so writers to overlapping paths
always run in the order the model asked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.models.types import ToolCall

PATH_WRITERS = frozenset({"write_file", "patch"})
CANCELLED = '{"error": "cancelled: the user interrupted before this call ran"}'


@dataclass(frozen=True)
class CallOutcome:
    call: ToolCall
    content: str
    is_error: bool
    result: Any = None
    """The registry's ``ToolResult``; None for cancelled calls."""


def plan_batches(calls: list[ToolCall], parallel_safe: Callable[[str], bool],
                 path_of: Callable[[ToolCall], str | None]) -> list[list[int]]:
    """Indices of ``calls`` grouped into batches (see the module docstring)."""
    batches: list[list[int]] = []
    current: list[int] = []
    claimed: set[str] = set()
    for index, call in enumerate(calls):
        path = path_of(call) if call.name in PATH_WRITERS else None
        if parallel_safe(call.name) or (path is not None and path not in claimed):
            current.append(index)
            if path is not None:
                claimed.add(path)
            continue
        if current:
            batches.append(current)
        current, claimed = [index], ({path} if path else set())
        if path is None:  # not batchable at all: runs alone
            batches.append(current)
            current, claimed = [], set()
    if current:
        batches.append(current)
    return batches


def write_path(call: ToolCall, cwd: Path) -> str | None:
    """The resolved target of a writer call, or None if its arguments are unreadable."""
    import json

    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return None
    path = args.get("path") if isinstance(args, dict) else None
    return str((cwd / path).resolve()) if isinstance(path, str) and path else None


def run_calls(calls: list[ToolCall], execute: Callable[[ToolCall], CallOutcome],
              batches: list[list[int]], interrupted: threading.Event) -> list[CallOutcome]:
    """Execute ``batches``; calls not started before an interrupt are marked cancelled."""
    outcomes: dict[int, CallOutcome] = {}
    for batch in batches:
        if interrupted.is_set():
            break
        if len(batch) == 1:
            outcomes[batch[0]] = execute(calls[batch[0]])
            continue
        with ThreadPoolExecutor(max_workers=min(8, len(batch))) as pool:
            for index, outcome in zip(batch, pool.map(lambda i: execute(calls[i]), batch),
                                      strict=True):
                outcomes[index] = outcome
    return [outcomes.get(i) or CallOutcome(call, CANCELLED, True) for i, call in enumerate(calls)]
