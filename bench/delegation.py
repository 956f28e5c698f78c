"""Delegation: a batch of 3 children against one child, with a slow model.

Run from the repository root:

    .venv/bin/python bench/delegation.py                    # 5 rounds, 1 s per model call
    .venv/bin/python bench/delegation.py --rounds 3 --delay 500 --json /tmp/delegation.json

A runtime of a temporary home (the default toolsets, delegation on) talks to the fake
LLM (``tests/fakellm``, in this process), which answers every model call after
``--delay`` ms. Each round is one parent turn from the warm runtime: the parent's first
call asks ``delegate_task`` for one task (a single) or three (a batch); every child reads
a file (one tool call) and then answers its summary, two model calls; the parent's
second call ends the turn. The delegation's wall time is from the moment the parent's
first answer is sent to the arrival of its second request (the fake LLM records both):
the tool call as a whole, children's set-up, sessions and reports included. Single and
batch rounds alternate, so load changes hit both alike.

Target: batch median <= 1.3 x single median. Exit status 0 even when the target fails;
1 when the set-up is broken (a child failed, a turn did not end as scripted).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.3
CHILDREN = 3


def write_home(home: Path, base_url: str, work: Path) -> None:
    """A home at the fake LLM, with the default toolsets and ``work`` as the cwd."""
    home.mkdir(parents=True)
    provider = {"model": "gpt-4o", "api_base": base_url, "retry_backoff": 0,
                "max_retries": 1, "timeout": 30}
    config = {"defaults": [{"override provider": "custom"}], "provider": provider,
              "environment": {"cwd": str(work)}, "learning": {"enabled": False}}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (home / ".env").write_text("CUSTOM_API_KEY=sk-fake-bench-key\n")
    (home / ".env").chmod(0o600)


class Model:
    """Answers the parent from its script and each child with a read, then a summary."""

    def __init__(self, delay: float, notes: Path):
        self.delay = delay
        self.notes = notes
        self.goals: list[str] = []
        """The parent's next batch (set before each round)."""

    def __call__(self, request: Any) -> Any:
        from delegation_support import goal_of
        from fakellm import Reply, ToolCall

        goal = goal_of(request)
        roles = [m.get("role") for m in request.body.get("messages") or []]
        if goal is not None:
            if "tool" not in roles:
                return Reply(tool_calls=[ToolCall("read_file", {"path": str(self.notes)})],
                             delay=self.delay)
            return Reply(text=f"summary of {goal}", delay=self.delay)
        if "tool" not in roles:
            tasks = [{"goal": goal} for goal in self.goals]
            return Reply(tool_calls=[ToolCall("delegate_task", {"tasks": tasks})],
                         delay=self.delay)
        return Reply(text="all done", delay=self.delay)


def one_round(runtime: Any, llm: Any, model: Model, size: int) -> float:
    """Seconds the parent's delegate_task call took for ``size`` children."""
    from hermes.agent.factory import Interaction

    model.goals = [f"task {i} of {size}" for i in range(1, size + 1)]
    first = len(llm.requests)
    agent = runtime.container.agent_factory().new_session(Interaction(stream=False))
    try:
        result = agent.run_turn("split the work")
    finally:
        agent.close()
    requests = llm.requests[first:]
    if result.text != "all done" or len(requests) != 2 + 2 * size:
        raise RuntimeError(f"the turn went wrong: {result.text!r}, {len(requests)} requests")
    results = json.loads(str(requests[-1].tool_results[-1].content))["results"]
    if any(r["status"] != "done" for r in results):
        raise RuntimeError(f"a child failed: {results}")
    from delegation_support import goal_of

    parents = [r for r in requests if goal_of(r) is None]
    sent = llm.spans[parents[0].index][1]
    return parents[-1].received_at - sent


def measure(rounds: int, delay: float) -> dict[str, list[float]]:
    sys.path[:0] = [str(REPO / "tests"), str(REPO / "runtime")]
    from fakellm import FakeLLM
    from hermes.config import compose_config
    from hermes.container import build_runtime
    from hermes.home import home_from_path

    samples: dict[str, list[float]] = {"single": [], "batch": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        notes = root / "work" / "notes.txt"
        notes.parent.mkdir()
        notes.write_text("three things to do\n")
        model = Model(delay, notes)
        with FakeLLM(fallback=model, strict=False) as llm:
            write_home(root / "home", llm.openai_base_url, notes.parent)
            environ = {"HOME": str(root), "PATH": os.environ.get("PATH", ""),
                       "LANG": "C.UTF-8"}
            home = home_from_path(root / "home")
            config = compose_config(home, environ, []).config
            runtime = build_runtime(home, config, environ).start()
            try:
                one_round(runtime, llm, model, 1)  # warm: litellm loaded, connections open
                for _ in range(rounds):
                    samples["single"].append(one_round(runtime, llm, model, 1))
                    samples["batch"].append(one_round(runtime, llm, model, CHILDREN))
            finally:
                runtime.close()
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--delay", type=float, default=1000.0, help="model latency, ms")
    ap.add_argument("--json", type=Path, help="write every sample here")
    args = ap.parse_args()
    started = time.monotonic()
    try:
        samples = measure(args.rounds, args.delay / 1000)
    except Exception as exc:  # the set-up is broken: say so, exit 1
        print(f"bench: {exc!r}", file=sys.stderr)
        return 1
    single, batch = (statistics.median(samples[k]) for k in ("single", "batch"))
    ratio = batch / single
    print(f"delegation, {args.rounds} rounds, model delay {args.delay:g} ms, "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}, "
          f"{time.monotonic() - started:.0f} s")
    for name, values in samples.items():
        print(f"  {name:<7} median {statistics.median(values):6.3f} s  "
              f"min {min(values):6.3f}  max {max(values):6.3f}")
    met = ratio <= TARGET
    print(f"  batch of {CHILDREN} / single: {ratio:.3f}x "
          f"(target <= {TARGET:g}x: {'met' if met else 'MISSED'})")
    if args.json:
        args.json.write_text(json.dumps({"samples": samples, "ratio": ratio}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
