"""Side-by-side gateway start-up and memory: ``hermes gateway run`` of hermes-runtime (ours)
vs hermes-agent 0.19.0's gateway with its ``api_server`` platform (theirs).

Run from the repository root:

    .venv/bin/python bench/gateway_start.py                # 8 start rounds, 3 memory rounds
    .venv/bin/python bench/gateway_start.py --rounds 12 --memory-rounds 3 --json /tmp/gw.json

Both sides are set up as in ``api_load.py`` (the same homes, the same fake LLM, the same
proxy sink that keeps them offline). Start-up: each side starts once untimed (our first
start writes the profile's state, theirs its own files), then N rounds start and stop
each side in its reused home, the order flipping every round: the time from ``Popen``
to the first ``GET /health`` 200 whose body reports every profile ready (polled every
20 ms; theirs' body lists none); theirs' respawn-storm ledger is removed before each
start (``forget_starts``: past 5 starts in 120 s it backs off 10 s, 20 s, ...). Memory:
M rounds, interleaved the same way, start ours serving three profiles (``--profiles
p1,p2,p3``) and theirs its one profile, send each the same nine chat completions (three
per profile for ours), then read the gateway process's ``VmRSS`` and the PSS summed over
every process of its session (ours forks a CLI server per home beside the gateway);
medians over the rounds.

Targets (issue 26): start to ``/health`` 200 ours / theirs <= 1.0; gateway RSS, ours with
three profiles / theirs with one, <= 1.2; PSS of all the gateway's processes, ours with
three / theirs with one, <= 1.5. Exit status 0 even when a target fails; 1 when a side
cannot be set up (the message names the side).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api_load import (
    PROFILES,
    ProxySink,
    Server,
    SetupError,
    ensure_theirs_api_server,
    measure_rss,
    ours_has_gateway,
    ours_server,
    start_fake,
    stop_fake,
    theirs_server,
)
from cli_startup import DEFAULT_THEIRS_VENV, THEIRS_SPEC, add_common_arguments, ensure_theirs
from oneshot import TOKEN

START_TARGET, RSS_TARGET, PSS_TARGET = 1.0, 1.2, 1.5
POLL_S = 0.02


@dataclass
class Figures:
    """One side's samples: start-up seconds, and memory (KiB) after the nine requests."""

    start_s: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    pss_kib: list[int] = field(default_factory=list)
    processes: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def medians(self) -> dict[str, float]:
        return {"start_s": statistics.median(self.start_s),
                "rss_mib": statistics.median(self.rss_kib) / 1024,
                "pss_mib": statistics.median(self.pss_kib) / 1024,
                "processes": statistics.median(self.processes)}


def forget_starts(server: Server) -> None:
    """Theirs keeps a ledger of its starts and, past 5 in 120 s, sleeps 10 s, 20 s, 40 s ...
    before serving (``gateway/status.py`` ``record_start_and_check_storm``, a respawn-storm
    breaker): the rounds would measure that back-off. A user restarting now and then
    never meets it, so its ledger is removed before each start (it writes it anew)."""
    (Path(server.env["HERMES_HOME"]) / "gateway-starts.log").unlink(missing_ok=True)


def interleaved(rounds: int, sides: list[str]) -> list[list[str]]:
    return [sides if r % 2 == 0 else sides[::-1] for r in range(rounds)]


def measure(args: argparse.Namespace, theirs_exe: Path, tmp: Path) -> dict[str, Figures]:
    """Start-up rounds, then memory rounds; every gateway is stopped before this returns."""
    (tmp / "work").mkdir()
    notes = tmp / "work" / "notes.txt"
    notes.write_text(f"A small file for the gateway benchmark.\nThe token is {TOKEN}.\n")
    key = "bench-" + secrets.token_hex(13)
    sinks = {side: ProxySink() for side in ("ours", "theirs")}
    figures = {side: Figures() for side in ("ours", "theirs")}
    fake, fake_url = start_fake(notes)
    live: list[Server] = []

    def make(side: str, root: Path, profiles: tuple[str, ...] = ()) -> Server:
        made = (ours_server(args.ours, root, fake_url, key, sinks[side], profiles)
                if side == "ours" else theirs_server(theirs_exe, root, fake_url, key, sinks[side]))
        live.append(made)
        return made

    try:
        starters = {side: make(side, tmp / side) for side in ("ours", "theirs")}
        print("[bench] warm-up starts ...", file=sys.stderr)
        for server in starters.values():
            server.start(args.start_timeout, poll=POLL_S)
            server.stop()
        for r, order in enumerate(interleaved(args.rounds, ["ours", "theirs"])):
            print(f"[bench] start round {r + 1}/{args.rounds}", file=sys.stderr)
            for side in order:
                forget_starts(starters[side])
                figures[side].start_s.append(starters[side].start(args.start_timeout,
                                                                  poll=POLL_S))
                starters[side].stop()
        for r, order in enumerate(interleaved(args.memory_rounds, ["ours", "theirs"])):
            print(f"[bench] memory round {r + 1}/{args.memory_rounds}", file=sys.stderr)
            for side in order:
                server = make(side, tmp / f"{side}-mem-{r}", PROFILES if side == "ours" else ())
                memory, run = measure_rss(server, notes, args.timeout, args.start_timeout)
                figures[side].rss_kib.append(memory["rss_kib"])
                figures[side].pss_kib.append(memory["session_pss_kib"])
                figures[side].processes.append(memory["processes"])
                figures[side].failures += [s.detail for s in run.samples if not s.ok]
    finally:
        for server in live:
            server.stop()
        fake_summary = stop_fake(fake)
        for sink in sinks.values():
            sink.shutdown()
            sink.server_close()
    internet = {side: sink.seen for side, sink in sinks.items()}
    if any(internet.values()) or any(f.failures for f in figures.values()):
        print(f"[bench] warning: internet attempts {internet}; failed requests "
              f"{ {s: f.failures[:3] for s, f in figures.items()} }; fake {fake_summary}",
              file=sys.stderr)
    return figures


def report(figures: dict[str, Figures]) -> list[dict[str, Any]]:
    """Print the table and the targets; return the checks for the JSON output."""
    ours, theirs = figures["ours"].medians(), figures["theirs"].medians()
    rows = [("start to /health 200, median s", "start_s", ".2f"),
            ("gateway VmRSS MiB (ours 3 profiles)", "rss_mib", ".1f"),
            ("PSS of all its processes MiB", "pss_mib", ".1f"),
            ("processes", "processes", ".0f")]
    print(f"\n| {'measure':<36} | {'ours':>8} | {'theirs':>8} |")
    print(f"|{'-' * 38}|{'-' * 9}:|{'-' * 9}:|")
    for name, k, spec in rows:
        print(f"| {name:<36} | {format(ours[k], spec):>8} | {format(theirs[k], spec):>8} |")
    paired = statistics.median(a / b for a, b in zip(figures["ours"].start_s,
                                                    figures["theirs"].start_s, strict=True))
    print(f"\nstart-up samples s: ours {[round(s, 2) for s in figures['ours'].start_s]}, "
          f"theirs {[round(s, 2) for s in figures['theirs'].start_s]}")
    print(f"info  median of the per-round start-up ratios ours / theirs = {paired:.2f}")
    print(f"info  PSS of all ours' processes / theirs' gateway RSS = "
          f"{ours['pss_mib'] / theirs['rss_mib']:.2f}\n")
    checks = [("start to /health 200 ours / theirs", ours["start_s"] / theirs["start_s"],
               START_TARGET),
              ("gateway RSS ours 3 profiles / theirs 1", ours["rss_mib"] / theirs["rss_mib"],
               RSS_TARGET),
              ("PSS all processes ours 3 profiles / theirs 1",
               ours["pss_mib"] / theirs["pss_mib"], PSS_TARGET)]
    for name, value, target in checks:
        print(f"{'PASS' if value <= target else 'FAIL'}  {name} = {value:.2f}  "
              f"(target <= {target:.2f})")
    return [{"name": n, "value": v, "target": t, "pass": v <= t} for n, v, t in checks]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=f"`gateway run` start-up to /health 200 and gateway memory, hermes-runtime "
                    f"vs {THEIRS_SPEC}, interleaved in one run against one fake LLM.",
        epilog=f"Targets: start-up ours/theirs <= {START_TARGET}; gateway RSS ours (3 "
               f"profiles) / theirs (1) <= {RSS_TARGET}; PSS of all processes <= "
               f"{PSS_TARGET}. Exits 0 after measuring (FAIL lines); 1 when a side cannot be "
               "set up.")
    ap.add_argument("--rounds", type=int, default=8, help="start-up rounds (default: 8)")
    ap.add_argument("--memory-rounds", type=int, default=3,
                    help="memory rounds, each a new start per side (default: 3)")
    add_common_arguments(ap)
    ap.add_argument("--timeout", type=float, default=120, help="per request, s (default: 120)")
    ap.add_argument("--start-timeout", type=float, default=180,
                    help="for a gateway's /health to answer 200, s (default: 180)")
    args = ap.parse_args()
    if args.rounds < 1 or args.memory_rounds < 1:
        ap.error("--rounds and --memory-rounds must be >= 1")
    try:
        theirs_exe = args.theirs or ensure_theirs(DEFAULT_THEIRS_VENV)
        ensure_theirs_api_server(theirs_exe)
        if not (os.access(args.ours, os.X_OK) and ours_has_gateway(args.ours)):
            raise SetupError(f"ours: `{args.ours} gateway run --help` fails (run `uv sync "
                             "--frozen --group test`)")
        with tempfile.TemporaryDirectory(prefix="hermes-gateway-start-") as tmp:
            figures = measure(args, theirs_exe, Path(tmp))
    except SetupError as exc:
        print(f"[bench] ABORT: {exc}", file=sys.stderr)
        return 1
    print(f"\n{args.rounds} start rounds, {args.memory_rounds} memory rounds; "
          f"nproc={len(os.sched_getaffinity(0))}; load {os.getloadavg()[0]:.2f}; "
          f"python {platform.python_version()}; ours={args.ours}; theirs={theirs_exe}")
    checks = report(figures)
    if args.json:
        args.json.write_text(json.dumps(
            {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "python": platform.python_version(),
             "figures": {s: vars(f) for s, f in figures.items()}, "checks": checks},
            indent=2) + "\n")
        print(f"\nraw figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
