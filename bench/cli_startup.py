"""Side-by-side CLI start-up benchmark: hermes-runtime (ours) vs hermes-agent 0.19.0 (theirs).

Run from the repository root:

    .venv/bin/python bench/cli_startup.py                 # 15 rounds, default paths
    .venv/bin/python bench/cli_startup.py --rounds 30 --json /tmp/startup.json
    .venv/bin/python bench/cli_startup.py --theirs /some/venv/bin/hermes

"ours" is ``<repo>/.venv/bin/hermes`` (``uv sync --frozen --group test``).  "theirs" is
hermes-agent from its own virtualenv at ``bench/.venvs/hermes-agent-0.19.0``, created
with ``python -m venv`` + ``pip install hermes-agent==0.19.0`` on first use (about a
minute), using the interpreter that runs this script so both sides share one Python.

Every command runs once untimed (pyc compilation, hermes-agent's first-run update
check), then N rounds interleave ours/theirs, the order flipping every round.  Each
tool gets its own temporary HOME (with HERMES_HOME=<tmp>/.hermes), reused across
rounds.  hermes-agent has no env var that disables its update check: ``--version``
queries PyPI unless ``$HERMES_HOME/.update_check`` is younger than 6 h, so the warm-up
fills that cache and the timed runs only read it.  Reported: median wall time
(perf_counter around Popen + wait4) and peak RSS (max ru_maxrss over the rounds).
Exit status is 0 even if a target fails: this is a measurement, not a test.
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
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THEIRS_SPEC = "hermes-agent==0.19.0"
DEFAULT_OURS = REPO / ".venv" / "bin" / "hermes"
DEFAULT_THEIRS_VENV = REPO / "bench" / ".venvs" / "hermes-agent-0.19.0"
# (numerator, denominator, target or None for "informational only")
RATIOS: list[tuple[str, str, float | None]] = [
    ("ours profile list", "theirs profile list", 0.5),
    ("ours config show", "theirs profile list", 1.0),
    ("ours --version", "theirs --version", None),
]


@dataclass
class Command:
    label: str
    argv: list[str]
    env: dict[str, str]
    wall_ms: list[float] = field(default_factory=list)
    maxrss_kib: list[int] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.wall_ms)

    @property
    def peak_rss_mib(self) -> float:
        return max(self.maxrss_kib) / 1024


def ensure_theirs(venv: Path) -> Path:
    """Return hermes-agent's ``hermes`` in ``venv``, creating the venv if needed."""
    exe = venv / "bin" / "hermes"
    if exe.exists() and any(venv.glob("lib/python*/site-packages/hermes_agent-0.19.0.dist-info")):
        return exe
    try:
        if not (venv / "bin" / "python").exists():
            print(f"[bench] creating virtualenv {venv} ...", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        print(f"[bench] installing {THEIRS_SPEC} (takes about a minute) ...", file=sys.stderr)
        pip = [str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", THEIRS_SPEC]
        subprocess.run(pip, check=True, stdout=sys.stderr)
    except subprocess.CalledProcessError as exc:
        sys.exit(f"[bench] ABORT: could not set up {venv}: {exc} (or pass --theirs PATH)")
    print("[bench] install done", file=sys.stderr)
    return exe


def make_env(home: Path) -> dict[str, str]:
    """The caller's environment minus any HERMES_* variables, with a private home.

    The home directory exists, as it does for anyone who has used the tool once
    (hermes-agent creates its own on first run; ours caches compositions in it).
    """
    (home / ".hermes").mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"))
    return env


def run_once(cmd: Command) -> tuple[float, int]:
    """Run ``cmd`` once; return (wall ms, ru_maxrss KiB). Exit on a non-zero status."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd.argv, env=cmd.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code != 0:
        # Re-run with capture so the failure can be explained; timings are void anyway.
        again = subprocess.run(cmd.argv, env=cmd.env, capture_output=True, text=True)
        sys.exit(f"[bench] ABORT: {cmd.label!r} ({' '.join(cmd.argv)}) exited {code}\n"
                 f"--- stderr (re-run, exit {again.returncode}) ---\n{again.stderr}")
    return elapsed, usage.ru_maxrss


def measure(ours: list[Command], theirs: list[Command], rounds: int) -> None:
    """One untimed warm-up of everything, then ``rounds`` interleaved timed rounds."""
    order: list[Command] = []
    for i in range(max(len(ours), len(theirs))):
        order += [c[i] for c in (ours, theirs) if i < len(c)]
    print(f"[bench] warm-up ({len(order)} commands) ...", file=sys.stderr)
    for cmd in order:
        run_once(cmd)
    for r in range(rounds):
        print(f"[bench] round {r + 1}/{rounds}", file=sys.stderr)
        for cmd in order if r % 2 == 0 else order[::-1]:
            ms, rss = run_once(cmd)
            cmd.wall_ms.append(ms)
            cmd.maxrss_kib.append(rss)


def report(cmds: dict[str, Command]) -> list[dict[str, object]]:
    """Print the table and the ratios; return the ratios for the JSON output."""
    print(f"\n| {'command':<22} | {'median ms':>9} | {'peak RSS MiB':>12} |")
    print(f"|{'-' * 24}|{'-' * 10}:|{'-' * 13}:|")
    for c in cmds.values():
        print(f"| {c.label:<22} | {c.median_ms:>9.1f} | {c.peak_rss_mib:>12.1f} |")
    print()
    out: list[dict[str, object]] = []
    for num, den, target in RATIOS:
        ratio = cmds[num].median_ms / cmds[den].median_ms
        verdict = "info" if target is None else ("PASS" if ratio <= target else "FAIL")
        goal = "no target" if target is None else f"target <= {target:.2f}"
        print(f"{verdict:<4}  {num} / {den} = {ratio:.2f}  ({goal})")
        out.append({"numerator": num, "denominator": den, "ratio": ratio,
                    "target": target, "verdict": verdict})
    return out


def add_common_arguments(ap: argparse.ArgumentParser) -> None:
    """``--ours``, ``--theirs`` and ``--json``, shared by the side-by-side benchmarks."""
    ap.add_argument("--ours", type=Path, default=DEFAULT_OURS,
                    help="our hermes executable (default: <repo>/.venv/bin/hermes)")
    ap.add_argument("--theirs", type=Path, default=None,
                    help="hermes-agent's hermes executable (default: created on demand "
                         f"in {DEFAULT_THEIRS_VENV.relative_to(REPO)})")
    ap.add_argument("--json", type=Path, metavar="PATH", help="also write raw figures here")


def checked_arguments(ap: argparse.ArgumentParser) -> argparse.Namespace:
    """Parse; refuse ``--rounds`` below 1 and an ``--ours`` that cannot run."""
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    if not os.access(args.ours, os.X_OK):
        ap.error(f"{args.ours} is not executable (run `uv sync --frozen --group test`?)")
    return args


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Median start-up time and peak RSS of hermes-runtime's CLI vs "
                    f"{THEIRS_SPEC}, measured interleaved in one run.",
        epilog="Targets: ours 'profile list' <= 0.5x theirs 'profile list'; "
               "ours 'config show' <= 1.0x theirs 'profile list'. Always exits 0 "
               "after measuring; FAIL lines mark missed targets.")
    ap.add_argument("--rounds", type=int, default=15, help="timed rounds (default: 15)")
    add_common_arguments(ap)
    args = checked_arguments(ap)
    theirs_exe: Path = args.theirs or ensure_theirs(DEFAULT_THEIRS_VENV)
    if not os.access(theirs_exe, os.X_OK):
        ap.error(f"{theirs_exe} is not executable")

    tmp = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    try:
        (tmp / "ours").mkdir()
        (tmp / "theirs").mkdir()
        ours_env, theirs_env = make_env(tmp / "ours"), make_env(tmp / "theirs")
        ours = [Command(f"ours {' '.join(a)}", [str(args.ours), *a], ours_env)
                for a in (["--version"], ["profile", "list"], ["config", "show"])]
        theirs = [Command(f"theirs {' '.join(a)}", [str(theirs_exe), *a], theirs_env)
                  for a in (["--version"], ["profile", "list"])]
        measure(ours, theirs, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    cmds = {c.label: c for c in ours + theirs}
    print(f"\n{args.rounds} rounds; nproc={len(os.sched_getaffinity(0))}; "
          f"python {platform.python_version()}; ours={args.ours}; theirs={theirs_exe}")
    ratios = report(cmds)
    if args.json:
        raw = {
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rounds": args.rounds,
            "nproc": len(os.sched_getaffinity(0)), "python": platform.python_version(),
            "ours": str(args.ours), "theirs": str(theirs_exe),
            "commands": {c.label: {"argv": c.argv, "wall_ms": c.wall_ms,
                                   "maxrss_kib": c.maxrss_kib, "median_ms": c.median_ms,
                                   "peak_rss_mib": c.peak_rss_mib} for c in cmds.values()},
            "ratios": ratios,
        }
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
        print(f"\nraw figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
