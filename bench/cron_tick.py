"""Cron tick benchmark: the work of one scheduler tick over 1,000 jobs, none of them due,
ours (hermes-runtime) and, for comparison, hermes-agent 0.19.0's.

Run from the repository root:

    .venv/bin/python bench/cron_tick.py                       # 1,000 jobs, 50 rounds
    .venv/bin/python bench/cron_tick.py --jobs 5000 --rounds 20 --json /tmp/cron_tick.json
    .venv/bin/python bench/cron_tick.py --only ours

Ours: ``JobStore.claim_due()``, what the gateway's minute tick runs in a worker thread
(take ``cron/jobs.lock``, read ``cron/jobs.json``, fail runs abandoned by dead
processes, compare each job's next run with now; nothing is written when nothing is
due). The jobs are made through the store (``every Nh``, five-field cron expressions
and once-times, all in the future), as ``hermes cron add`` makes them. Theirs:
``cron.scheduler.tick(verbose=False)`` in hermes-agent's own venv (``HERMES_HOME`` a
temporary directory, jobs made with ``cron.jobs.create_job``), which takes its tick lock
and reads its jobs the same way. Each side runs in its own process; one untimed tick
first, then ``--rounds`` timed ticks; median, p90 and max wall time and the median of
the process's CPU time.

Target: ours median <= 50 ms. Exit status 0 even when it is missed.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cli_startup import DEFAULT_THEIRS_VENV, REPO, ensure_theirs

TARGET_MS = 50.0
SCHEDULES = ("every {n}h", "{m} {h} * * *", "{m} {h} * * 1-5", "2099-0{mo}-1{d}T09:{m:02d}")

TIMING = """
import json, statistics, sys, time
def measure(tick, rounds):
    tick()
    wall, cpu = [], []
    for _ in range(rounds):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = tick()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        assert not result, f"a job was due: {result!r}"
    wall.sort()
    return {"median_ms": statistics.median(wall), "p90_ms": wall[int(len(wall) * 0.9) - 1],
            "max_ms": wall[-1], "cpu_median_ms": statistics.median(cpu)}
"""

OURS = TIMING + """
from pathlib import Path
from hermes.config.zones import zone_named
from hermes.cron.clock import Clock
from hermes.cron.jobs import Job
from hermes.cron.schedule import parse_schedule
from hermes.cron.store import JobStore
directory, count, rounds, forms = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \\
    json.loads(sys.argv[4])
store = JobStore(directory, Clock(zone_named("UTC")))
for n in range(count):
    text = forms[n % len(forms)].format(n=1 + n % 23, m=n % 60, h=n % 24, mo=1 + n % 9,
                                        d=n % 10)
    store.add(Job(id="", name=f"job {n}", prompt=f"Report {n}", schedule=""),
              parse_schedule(text, store.clock.now()))
assert len(store.jobs()) == count
print(json.dumps(measure(store.claim_due, rounds)))
"""

THEIRS = TIMING + """
count, rounds, forms = int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
from cron.jobs import create_job, load_jobs
from cron.scheduler import tick
for n in range(count):
    text = forms[n % len(forms)].format(n=1 + n % 23, m=n % 60, h=n % 24, mo=1 + n % 9,
                                        d=n % 10)
    create_job(f"Report {n}", text, name=f"job {n}")
assert len(load_jobs()) == count
print(json.dumps(measure(lambda: tick(verbose=False), rounds)))
"""


def run_side(python: Path, script: str, args: argparse.Namespace, env: dict[str, str],
             directory: Path) -> dict[str, Any]:
    argv = [str(python), "-c", script, str(directory), str(args.jobs), str(args.rounds),
            json.dumps(SCHEDULES)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800,
                          cwd=directory)
    if done.returncode != 0:
        raise SystemExit(f"{python}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--only", choices=("ours", "theirs"))
    parser.add_argument("--theirs-venv", type=Path, default=DEFAULT_THEIRS_VENV)
    parser.add_argument("--json", type=Path, help="Write the figures here too.")
    args = parser.parse_args()
    results: dict[str, Any] = {"jobs": args.jobs, "rounds": args.rounds,
                               "machine": f"{platform.machine()}, Python "
                                          f"{platform.python_version()}"}
    with tempfile.TemporaryDirectory(prefix="cron-tick-") as scratch:
        base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC"}
        if args.only != "theirs":
            ours = Path(scratch) / "ours" / "cron"
            ours.mkdir(parents=True)
            results["ours"] = run_side(Path(sys.executable), OURS, args, base, ours)
        if args.only != "ours":
            theirs_exe = ensure_theirs(args.theirs_venv)
            home = Path(scratch) / "theirs"
            home.mkdir()
            results["theirs"] = run_side(theirs_exe.parent / "python", THEIRS, args,
                                         base | {"HERMES_HOME": str(home), "HOME": scratch},
                                         home)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


def report(results: dict[str, Any]) -> None:
    print(f"cron tick over {results['jobs']} jobs, none due ({results['rounds']} rounds)")
    print(f"{'side':<8}{'median ms':>11}{'p90 ms':>9}{'max ms':>9}{'cpu ms':>9}")
    for side in ("ours", "theirs"):
        if side in results:
            r = results[side]
            print(f"{side:<8}{r['median_ms']:>11.2f}{r['p90_ms']:>9.2f}{r['max_ms']:>9.2f}"
                  f"{r['cpu_median_ms']:>9.2f}")
    if "ours" in results:
        met = results["ours"]["median_ms"] <= TARGET_MS
        print(f"target: ours median <= {TARGET_MS:g} ms: {'met' if met else 'MISSED'}")
    if "ours" in results and "theirs" in results:
        ratio = results["ours"]["median_ms"] / results["theirs"]["median_ms"]
        print(f"ours / theirs (median): {ratio:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "bench"))
    raise SystemExit(main())
