"""Cost of confining local commands and of the file tools' policy check: the terminal
tool, ``read_file`` and ``write_file`` with the sandbox off, under bubblewrap and under
Landlock, in one run.

Run from the repository root:

    .venv/bin/python bench/sandbox.py                    # 200 runs per command and side
    .venv/bin/python bench/sandbox.py --runs 50 --json /tmp/sandbox.json

Each side is a ``LocalEnvironment`` of a temporary profile (the Hermes root and a fake
``~/.ssh`` exist, so policies are cut as in real use) behind the real tool dispatch
(``ToolRegistry.dispatch("terminal", ...)``), working in a small git repository
outside ``/tmp``. Commands: ``true`` and ``git status``. The sides take turns within
every round (the order rotates each round), so machine noise lands on all alike; one
untimed round first (it also probes the backends). The process imports litellm first,
as a runtime does, because Landlock's ``preexec_fn`` makes ``subprocess`` fork the
whole process instead of ``vfork``. Reported: the median wall time of one dispatch, its
10th and 90th percentiles, and the overhead: the median of the per-round differences to
the sandbox-off side.

The file tools (``--file-runs``, 1,000 by default) read a 200-line file and write a
small one in the same repository through the same dispatch, the sides taking turns the
same way: with the sandbox on, each call resolves the path in the commands' view and
checks it against the session's policy (kept while nothing it was cut from changes);
with it off, only the older rules apply.

Targets: median overhead ≤ 10 ms per command for either backend; ≤ 0.2 ms per
``read_file``/``write_file`` call. Exit status 0 even if one is missed: this is a
measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "runtime"))

from hermes.config.schema import SandboxSettings  # noqa: E402
from hermes.environments.local import LocalEnvironment  # noqa: E402
from hermes.home import home_for  # noqa: E402
from hermes.tools.context import ToolContext  # noqa: E402
from hermes.tools.registry import build_tool_registry  # noqa: E402

SIDES = {"off": SandboxSettings(mode="off"),
         "bubblewrap": SandboxSettings(backend="bubblewrap"),
         "landlock": SandboxSettings(backend="landlock")}
COMMANDS = ("true", "git status")
TARGET_MS = 10.0
FILE_CALLS = {"read_file": {"path": "notes.txt"},
              "write_file": {"path": "out.txt", "content": "written by the bench\n"}}
FILE_TARGET_MS = 0.2


def make_workspace(base: Path) -> tuple[Path, Path, dict[str, str]]:
    """A user home with a Hermes root and ``~/.ssh``, and a small git repository."""
    user = base / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_ed25519").write_text("fake key\n")
    repo = base / "repo"
    repo.mkdir()
    for index in range(20):
        (repo / f"file{index}.txt").write_text(f"line {index}\n" * 20)
    environ = {"HOME": str(user), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
               "GIT_CONFIG_NOSYSTEM": "1"}
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run([*git, *args], cwd=repo, env=environ, check=True)
    (repo / "file0.txt").write_text("changed\n")
    (repo / "notes.txt").write_text("".join(f"note {index}\n" for index in range(200)))
    return user, repo, environ


def make_contexts(user: Path, repo: Path, environ: dict[str, str]) -> dict[str, ToolContext]:
    home = home_for(user / ".hermes", "bench").ensure()
    return {name: ToolContext.for_session(
        home, LocalEnvironment(home, str(repo), 60, environ, settings), f"bench-{name}",
        environ=environ) for name, settings in SIDES.items()}


def one(registry: Any, ctx: ToolContext, command: str) -> float:
    """Wall time of one dispatch, in ms."""
    started = time.perf_counter()
    result = registry.dispatch("terminal", {"command": command}, ctx)
    elapsed = (time.perf_counter() - started) * 1000
    if '"exit_code": 0' not in result.content:
        raise SystemExit(f"{command!r} failed: {result.content[:500]}")
    return elapsed


def one_file_call(registry: Any, ctx: ToolContext, tool: str) -> float:
    """Wall time of one file tool dispatch, in ms."""
    started = time.perf_counter()
    result = registry.dispatch(tool, FILE_CALLS[tool], ctx)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.content[:500]}")
    return elapsed


Samples = dict[str, dict[str, list[float]]]


def measure(runs: int, contexts: dict[str, ToolContext], file_runs: int) -> Samples:
    registry = build_tool_registry(["terminal", "file"], environ={})
    samples: Samples = {c: {s: [] for s in SIDES} for c in (*COMMANDS, *FILE_CALLS)}
    order = list(SIDES)
    for round_ in range(max(runs, file_runs) + 1):
        calls = [(command, one) for command in COMMANDS if round_ <= runs]
        calls += [(tool, one_file_call) for tool in FILE_CALLS if round_ <= file_runs]
        for name, timed in calls:
            for side in order[round_ % len(order):] + order[:round_ % len(order)]:
                measured = timed(registry, contexts[side], name)
                if round_:  # round 0 is the untimed warm-up
                    samples[name][side].append(measured)
    return samples


def summary(samples: Samples) -> list[dict[str, Any]]:
    rows = []
    for command, sides in samples.items():
        for side, values in sides.items():
            paired = [a - b for a, b in zip(values, sides["off"], strict=True)]
            deciles = statistics.quantiles(values, n=10)
            rows.append({"command": command, "side": side, "median_ms": statistics.median(values),
                         "p10_ms": deciles[0], "p90_ms": deciles[-1],
                         "overhead_ms": statistics.median(paired) if side != "off" else 0.0})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--file-runs", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--lean", action="store_true", help="do not import litellm first")
    args = parser.parse_args()
    if not args.lean:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
        import litellm  # noqa: F401  # a runtime's size: what fork() has to copy
    base = Path(tempfile.mkdtemp(prefix="hermes-bench-sandbox-", dir="/var/tmp"))
    try:
        contexts = make_contexts(*make_workspace(base))
        for side in ("bubblewrap", "landlock"):
            choice = contexts[side].environment.sandbox.choice()  # type: ignore[attr-defined]
            if choice.backend is None:
                raise SystemExit(f"{side} does not work here: {choice.error or choice.detail}")
        samples = measure(args.runs, contexts, args.file_runs)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{args.runs} runs per command, {args.file_runs} per file tool, and side; "
          f"{platform.machine()}, "
          f"Python {platform.python_version()}, {platform.release()}")
    print(f"{'command':<12} {'side':<11} {'median ms':>10} {'p10':>7} {'p90':>7} "
          f"{'overhead ms':>12}  target")
    for row in summary(samples):
        limit = FILE_TARGET_MS if row["command"] in FILE_CALLS else TARGET_MS
        verdict = "" if row["side"] == "off" else (
            "ok" if row["overhead_ms"] <= limit else "MISSED")
        print(f"{row['command']:<12} {row['side']:<11} {row['median_ms']:>10.2f} "
              f"{row['p10_ms']:>7.2f} {row['p90_ms']:>7.2f} {row['overhead_ms']:>12.2f}  "
              f"{verdict}")
    if args.json:
        args.json.write_text(json.dumps(samples, indent=1))


if __name__ == "__main__":
    main()
