"""Side by side: which commands need approval, ours vs hermes-agent 0.19.0's detector.

Run from the repository root:

    .venv/bin/python bench/approval_corpus.py
    .venv/bin/python bench/approval_corpus.py --theirs /some/venv/bin/hermes --json /tmp/a.json

The corpus is ``tests/danger_table.py`` (every dangerous class and the tricky safe
commands). Each side runs in its own interpreter with the same ``HOME`` (a
temporary directory): ours through ``hermes.tools.danger.detect_dangers``, theirs
through ``tools.approval.detect_dangerous_command`` and ``detect_hardline_command``.
Prints how many of the dangerous commands each side gates, how many of those that
must never run it refuses outright (hard block), how many safe ones it flags, the
commands where the two disagree, and the median detection time per command
(``--rounds`` passes over the corpus, after one untimed pass).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cli_startup import DEFAULT_OURS, REPO, add_common_arguments, ensure_theirs

sys.path.insert(0, str(REPO / "tests"))
from danger_table import DANGEROUS, SAFE  # noqa: E402

OURS_PROBE = """
import json, sys, time
from hermes.tools.danger import detect_dangers
commands, rounds = json.load(sys.stdin)
def verdict(c):
    found = detect_dangers(c)
    return [bool(found), found[0].key if found else None, bool(found and found[0].hard)]
verdicts = [verdict(c) for c in commands]
times = []
for _ in range(rounds):
    start = time.perf_counter()
    for c in commands:
        detect_dangers(c)
    times.append((time.perf_counter() - start) / len(commands))
print(json.dumps({"verdicts": verdicts, "seconds_per_command": times}))
"""

THEIRS_PROBE = """
import json, sys, time
from tools.approval import detect_dangerous_command, detect_hardline_command
commands, rounds = json.load(sys.stdin)
def verdict(c):
    hard, hard_reason = detect_hardline_command(c)
    if hard:
        return [True, hard_reason, True]
    dangerous, key, _ = detect_dangerous_command(c)
    return [bool(dangerous), key, False]
verdicts = [verdict(c) for c in commands]
times = []
for _ in range(rounds):
    start = time.perf_counter()
    for c in commands:
        detect_hardline_command(c)
        detect_dangerous_command(c)
    times.append((time.perf_counter() - start) / len(commands))
print(json.dumps({"verdicts": verdicts, "seconds_per_command": times}))
"""


def run_probe(python: Path, probe: str, commands: list[str], rounds: int,
              home: Path) -> dict[str, Any]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "HERMES_HOME": str(home / ".hermes")}
    done = subprocess.run([str(python), "-c", probe], input=json.dumps([commands, rounds]),
                          capture_output=True, text=True, env=env, cwd=home, check=False)
    if done.returncode != 0:
        raise SystemExit(f"[bench] {python} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(ap)
    ap.add_argument("--rounds", type=int, default=20, help="timed passes (default: 20)")
    args = ap.parse_args()
    ours_python = (args.ours or DEFAULT_OURS).parent / "python"
    theirs_python = (args.theirs or ensure_theirs(REPO / "bench" / ".venvs" /
                                                  "hermes-agent-0.19.0")).parent / "python"
    commands = [c for c, _, _ in DANGEROUS] + SAFE
    with tempfile.TemporaryDirectory(prefix="hermes-approval-bench-") as tmp:
        home = Path(tmp)
        ours = run_probe(ours_python, OURS_PROBE, commands, args.rounds, home)
        theirs = run_probe(theirs_python, THEIRS_PROBE, commands, args.rounds, home)
    report = summarise(commands, ours, theirs)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def summarise(commands: list[str], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    n_danger = len(DANGEROUS)
    must_block = [index for index, (_, _, hard) in enumerate(DANGEROUS) if hard]
    report: dict[str, Any] = {"dangerous": n_danger, "safe": len(SAFE), "hard": len(must_block)}
    for side, result in (("ours", ours), ("theirs", theirs)):
        flags = [v[0] for v in result["verdicts"]]
        report[side] = {
            "gated": sum(flags[:n_danger]), "safe_flagged": sum(flags[n_danger:]),
            "hard_blocked": sum(result["verdicts"][i][2] for i in must_block),
            "us_per_command": statistics.median(result["seconds_per_command"]) * 1e6,
        }
    print(f"corpus: {n_danger} dangerous ({len(must_block)} never to run), {len(SAFE)} safe "
          "(tests/danger_table.py)")
    for side in ("ours", "theirs"):
        figures = report[side]
        print(f"{side:>6}: gated {figures['gated']}/{n_danger}, hard-blocked "
              f"{figures['hard_blocked']}/{len(must_block)}, safe flagged "
              f"{figures['safe_flagged']}/{len(SAFE)}, "
              f"{figures['us_per_command']:.0f} µs per command (median of passes)")
    ratio = report["ours"]["us_per_command"] / report["theirs"]["us_per_command"]
    report["time_ratio"] = ratio
    print(f"detection time ours/theirs: {ratio:.2f}")
    print("disagreements (command: ours | theirs):")
    for command, mine, other in zip(commands, ours["verdicts"], theirs["verdicts"],
                                    strict=True):
        if mine[0] != other[0]:
            print(f"  {command!r}: {mine[1] or 'safe'} | {other[1] or 'safe'}")
    return report


if __name__ == "__main__":
    sys.exit(main())
