"""The learning loop off the critical path: ``hermes -z`` with a background review after
every turn vs the same turn with learning off.

Run from the repository root:

    .venv/bin/python bench/learning.py                     # 12 rounds
    .venv/bin/python bench/learning.py --rounds 20 --json /tmp/learning.json
    .venv/bin/python bench/skills.py --only review          # the same, beside the skills figures

One fake LLM (``tests.fakellm``, a subprocess) answers every model call after
``--delay`` ms, as a real provider would after its latency: a one-shot is one
``read_file`` call and then the answer; a review (both passes: memory, then skills)
saves a memory entry, then answers "Nothing to save." twice — three calls, so a review
outlives the one-shot that started it and overlaps the next one. Two homes through
their warm servers (the default mode): "on" (``learning.memory_nudge_turns=1``,
``learning.skill_nudge_iterations=1``: every one-shot triggers a review) and "off"
(``learning.enabled=false``). After an untimed warm-up each, N rounds interleave on and
off, the order flipping every round; the user-visible latency is the client's wall time
(it returns when the answer is printed; the review goes on in the server). The fake's
log must show every review (3 calls per one-shot on the "on" side) and none for "off".
Target: median wall on / off <= 1.05. Exit status 0 even when the target fails; 1 when
the set-up is broken.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cli_startup import DEFAULT_OURS, REPO, Command
from cli_startup import measure as interleave
from oneshot import clean_env, serve_until_signalled

TARGET = 1.05
REVIEW_MARK = "[Background review:"
ANSWER = "The notes are read."


def serve_fake(notes: Path, delay: float) -> int:
    """The fake LLM process: print the port, serve until SIGTERM, print a JSON summary."""
    sys.path.insert(0, str(REPO))
    from tests.fakellm import RecordedRequest, Reply, ToolCall
    from tests.fakellm.handler import Handler

    Handler.disable_nagle_algorithm = True  # see bench/oneshot.py

    def respond(request: RecordedRequest) -> Reply:
        prompt = request.last_user_text or ""
        last = (request.body.get("messages") or [{}])[-1]
        if prompt.startswith(REVIEW_MARK + " memory]") and last.get("role") == "user":
            entry = {"action": "add", "target": "memory", "content": f"note {request.index}"}
            return Reply(tool_calls=[ToolCall("memory", entry)], delay=delay)
        if prompt.startswith(REVIEW_MARK):
            return Reply(text="Nothing to save.", delay=delay)
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("read_file", {"path": str(notes)})], delay=delay)
        return Reply(text=ANSWER, delay=delay)

    llm = serve_until_signalled(respond)
    calls: dict[str, dict[str, int]] = {}
    for request in llm.requests:
        key = request.headers.get("authorization", "none").removeprefix("Bearer ")
        kind = "review" if (request.last_user_text or "").startswith(REVIEW_MARK) else "chat"
        calls.setdefault(key, {"chat": 0, "review": 0})[kind] += 1
    print(json.dumps({"calls": calls, "problems": llm.problems}), flush=True)
    return 0


def side(exe: Path, root: Path, base_url: str, label: str, learning: str,
         notes: Path) -> Command:
    env = clean_env(root)
    (root / ".hermes" / "config.yaml").write_text(
        "defaults:\n- override provider: custom\n"
        f"provider:\n  model: bench-learning\n  api_base: {base_url}\n"
        f"learning:\n{learning}")
    (root / ".hermes" / ".env").write_text(f"CUSTOM_API_KEY=sk-bench-{label}\n")
    (root / ".hermes" / ".env").chmod(0o600)
    return Command(label, [str(exe), "-z", f"Read {notes}."], env)


def review_latency(exe: Path, rounds: int, tmp: Path,
                   delay: float = 0.3) -> tuple[Command, Command]:
    """The "on" and "off" one-shots, measured (``bench/skills.py``'s ``review``)."""
    (on, off), _ = measure(exe, rounds, delay, tmp)
    return on, off


def measure(exe: Path, rounds: int, delay: float, tmp: Path) -> tuple[list[Command], Any]:
    (tmp / "work").mkdir()
    notes = tmp / "work" / "notes.txt"
    notes.write_text("Notes for the learning benchmark.\n")
    fake = subprocess.Popen([sys.executable, __file__, "--serve-fake", str(notes),
                             "--delay", str(delay)], cwd=REPO, stdout=subprocess.PIPE,
                            text=True)
    assert fake.stdout is not None
    sides: list[Command] = []
    try:
        base_url = f"http://127.0.0.1:{int(fake.stdout.readline())}/v1"
        sides = [side(exe, tmp / "on", base_url, "on",
                      "  memory_nudge_turns: 1\n  skill_nudge_iterations: 1\n", notes),
                 side(exe, tmp / "off", base_url, "off", "  enabled: false\n", notes)]
        interleave(sides[:1], sides[1:], rounds)
    finally:
        for command in sides:  # stopping waits for the reviews the servers still run
            subprocess.run([str(exe), "daemon", "stop"], env=command.env, check=False,
                           capture_output=True, timeout=120)
        fake.send_signal(signal.SIGTERM)
        output, _ = fake.communicate(timeout=60)
    summary = json.loads(output.strip().splitlines()[-1])
    check(rounds + 1, summary["calls"], summary["problems"])
    return sides, summary


def check(runs: int, calls: dict[str, dict[str, int]], problems: list[str]) -> None:
    """Each side ran ``runs`` one-shots (2 chat calls each); "on" reviewed every one."""
    expected = {"sk-bench-on": {"chat": 2 * runs, "review": 3 * runs},
                "sk-bench-off": {"chat": 2 * runs, "review": 0}}
    if calls != expected or problems:
        sys.exit(f"[bench] ABORT: fake LLM calls {calls}, expected {expected}; {problems}")


def report(sides: list[Command], delay: float) -> dict[str, Any]:
    on, off = sides
    ratio = on.median_ms / off.median_ms
    paired = statistics.median(a / b for a, b in zip(on.wall_ms, off.wall_ms, strict=True))
    print(f"\n| {'hermes -z through the warm server':<36} | {'learning on':>11} | "
          f"{'learning off':>12} |")
    print(f"|{'-' * 38}|{'-' * 12}:|{'-' * 13}:|")
    print(f"| {'median wall ms (user-visible)':<36} | {on.median_ms:>11.0f} | "
          f"{off.median_ms:>12.0f} |")
    print(f"| {'p90 wall ms':<36} | {_p90(on.wall_ms):>11.0f} | {_p90(off.wall_ms):>12.0f} |")
    print(f"| {'model calls per one-shot (delay ms)':<36} | {'2 + 3 review':>11} | "
          f"{'2':>12} |  ({delay:.0f} ms each)")
    print(f"\n{'PASS' if ratio <= TARGET else 'FAIL'}  median wall on / off = {ratio:.3f}  "
          f"(target <= {TARGET})")
    print(f"info  median of the per-round ratios = {paired:.3f}")
    return {"name": "review turn wall on / off", "value": ratio, "target": TARGET,
            "pass": ratio <= TARGET}


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[8] if len(values) > 1 else values[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=12, help="timed rounds (default: 12)")
    ap.add_argument("--delay", type=float, default=0.3,
                    help="seconds the fake takes per model call (default: 0.3)")
    ap.add_argument("--ours", type=Path, default=DEFAULT_OURS, help="our hermes executable")
    ap.add_argument("--json", type=Path, help="write the raw figures here")
    ap.add_argument("--serve-fake", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_fake:
        return serve_fake(args.serve_fake, args.delay)
    if args.rounds < 2:
        ap.error("--rounds must be >= 2")
    with tempfile.TemporaryDirectory(prefix="hermes-learning-") as tmp:
        sides, summary = measure(args.ours, args.rounds, args.delay, Path(tmp))
    print(f"\n{args.rounds} rounds; nproc={len(os.sched_getaffinity(0))}; "
          f"python {platform.python_version()}; ours={args.ours}")
    result = report(sides, args.delay * 1000)
    if args.json:
        args.json.write_text(json.dumps(
            {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rounds": args.rounds,
             "delay_s": args.delay, "wall_ms": {s.label: s.wall_ms for s in sides},
             "calls": summary["calls"], "check": result}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
