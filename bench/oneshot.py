"""Side-by-side one-shot benchmark: ``hermes -z`` of hermes-runtime (ours) vs hermes-agent 0.19.0.

Run from the repository root:

    .venv/bin/python bench/oneshot.py                      # 10 rounds, default paths
    .venv/bin/python bench/oneshot.py --rounds 20 --json /tmp/oneshot.json
    .venv/bin/python bench/oneshot.py --theirs /work/ref-venv/bin/hermes

One fake LLM (``tests.fakellm``, a subprocess on its own port) answers each one-shot
with one ``read_file`` call of a small file holding a token, then, once the tool
result is in the conversation, with a fixed answer that says whether the token came
back. Both sides must print that answer, with exactly 2 chat requests per run.
Ours, twice: cold (``--no-daemon``: the run imports everything) and warm (through
the profile's server, started by the untimed warm-up run and stopped at the end; the
RSS is the client's), each in a temporary home whose default profile uses the
``custom`` provider at the fake. Theirs: a temporary ``HERMES_HOME`` whose ``config.yaml`` sets
``model.provider: custom``, ``base_url``, ``api_key`` and ``context_length`` (which
keeps its context-length lookup off OpenRouter and models.dev). Each side runs once
untimed, then N rounds interleave ours cold, ours warm, theirs and ``python -X
importtime -c "import litellm"``, the order flipping every round: median wall time,
peak RSS (``wait4``).
Then the agent loop's own cost per tool iteration, in-process, with an instant model
and a no-op tool. Exit status 0 even when a target fails; 1 when the set-up is broken.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_startup import (
    DEFAULT_OURS,
    DEFAULT_THEIRS_VENV,
    REPO,
    THEIRS_SPEC,
    Command,
    add_common_arguments,
    ensure_theirs,
)

TOKEN = "bench-token-7f3a9c"
ANSWER = f"The file says {TOKEN}."
RUN_TAG = re.compile(r"\[bench run ([\w-]+)\]")
OURS_KEY = "sk-bench-ours"
WALL_TARGET, WARM_TARGET, CLIENT_RSS_MIB, LOOP_TARGET_MS = 0.8, 0.04, 30.0, 2.0


def serve_fake(notes: Path) -> int:
    """The fake LLM process: print the port, serve until SIGTERM, print a JSON summary."""
    sys.path.insert(0, str(REPO))
    from tests.fakellm import RecordedRequest, Reply, ToolCall
    from tests.fakellm.handler import Handler

    # The fake writes headers and body in separate sends. With Nagle's algorithm each
    # keep-alive answer then waits ~40 ms for a delayed ACK (44 ms vs 0.9 ms per request).
    Handler.disable_nagle_algorithm = True

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("read_file", {"path": str(notes)})])
        seen = any(TOKEN in str(result.content) for result in request.tool_results)
        return Reply(text=ANSWER if seen else "bench: the tool result lacks the token")

    llm = serve_until_signalled(respond)
    chats: dict[str, int] = {}
    probes: dict[str, int] = {}  # requests to paths the fake does not serve, by API key
    for request in llm.requests:
        if request.wire is None:
            key = request.headers.get("authorization", "none").removeprefix("Bearer ")
            probes[key] = probes.get(key, 0) + 1
        else:
            tag = RUN_TAG.search(request.last_user_text or "")
            run = tag.group(1) if tag else "untagged"
            chats[run] = chats.get(run, 0) + 1
    problems = [p for p in llm.problems if "no route for" not in p]
    print(json.dumps({"chats": chats, "probes": probes, "problems": problems}), flush=True)
    return 0


def serve_until_signalled(respond: Any) -> Any:
    """A fake LLM answering with ``respond``: print its port, serve until SIGTERM or
    SIGINT; the stopped server (its ``requests`` and ``problems``)."""
    from tests.fakellm import FakeLLM

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with FakeLLM(fallback=respond, strict=False) as llm:
        print(llm.port, flush=True)
        stop.wait()
    return llm


@dataclass
class Side(Command):
    """One command measured in the rounds (``Command`` plus what the one-shot adds)."""

    import_ms: list[float] = field(default_factory=list)
    """``-X importtime`` cumulative time of ``litellm`` (the import command only)."""
    runs: int = 0


def clean_env(root: Path) -> dict[str, str]:
    """The caller's environment without Hermes, litellm or provider settings; a private home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "LITELLM_"))
           and not k.endswith(("_API_KEY", "_BASE_URL"))}
    (root / ".hermes").mkdir(parents=True, mode=0o700, exist_ok=True)
    return env | {"HOME": str(root), "HERMES_HOME": str(root / ".hermes")}


def ours_side(exe: Path, root: Path, base_url: str, warm: bool = False) -> Side:
    """Ours cold (``--no-daemon``: everything imported in the run) or warm (through the
    profile's server, which the untimed warm-up run starts)."""
    env = clean_env(root)
    (root / ".hermes" / "config.yaml").write_text(
        "defaults:\n- override provider: custom\n"
        f"provider:\n  model: bench-ours\n  api_base: {base_url}\n")
    (root / ".hermes" / ".env").write_text(f"CUSTOM_API_KEY={OURS_KEY}\n")
    (root / ".hermes" / ".env").chmod(0o600)
    if warm:
        return Side("warm", [str(exe), "-z"], env)
    return Side("ours", [str(exe), "--no-daemon", "-z"], env)


def theirs_side(exe: Path, root: Path, base_url: str) -> Side:
    env = clean_env(root)
    (root / ".hermes" / "config.yaml").write_text(
        "model:\n  default: bench-theirs\n  provider: custom\n"
        f"  base_url: {base_url}\n  api_key: sk-bench-theirs\n  context_length: 128000\n")
    return Side("theirs", [str(exe), "-z"], env)


def run_once(side: Side, argv: list[str], cwd: Path) -> tuple[float, int, str, str]:
    """Run ``argv``; return (wall ms, ru_maxrss KiB, stdout, stderr). Exit on failure."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=side.env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = (time.perf_counter() - start) * 1000
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if code != 0:
        sys.exit(f"[bench] ABORT: {side.label} exited {code}: {' '.join(argv)}\n{stderr}")
    return elapsed, usage.ru_maxrss, stdout, stderr


def run_side(side: Side, notes: Path, cwd: Path, timed: bool) -> None:
    """One run of ``side``: a tagged one-shot (answer checked) or the litellm import."""
    if side.label == "litellm import":
        ms, rss, _, stderr = run_once(side, side.argv, cwd)
        found = re.search(r"\|\s*(\d+) \| litellm$", stderr, re.MULTILINE)
        if found is None:
            sys.exit("[bench] ABORT: no `litellm` line in the -X importtime output")
        if timed:
            side.import_ms.append(int(found.group(1)) / 1000)
    else:
        side.runs += 1
        prompt = f"Read {notes} and tell me what it says. [bench run {side.label}-{side.runs}]"
        ms, rss, stdout, stderr = run_once(side, [*side.argv, prompt], cwd)
        if stdout.strip() != ANSWER:
            sys.exit(f"[bench] ABORT: {side.label} printed {stdout.strip()!r}, expected "
                     f"{ANSWER!r}\n--- stderr ---\n{stderr}")
    if timed:
        side.wall_ms.append(ms)
        side.maxrss_kib.append(rss)


def measure_oneshots(ours_exe: Path, theirs_exe: Path, rounds: int,
                     tmp: Path) -> tuple[list[Side], dict[str, Any]]:
    """Start the fake; warm up, run the interleaved rounds; check the fake's request log."""
    (tmp / "work").mkdir()
    notes = tmp / "work" / "notes.txt"
    notes.write_text(f"A small file for the one-shot benchmark.\nThe token is {TOKEN}.\n")
    fake = subprocess.Popen([sys.executable, __file__, "--serve-fake", str(notes)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    assert fake.stdout is not None
    try:
        base_url = f"http://127.0.0.1:{int(fake.stdout.readline())}/v1"
        sides = [ours_side(ours_exe, tmp / "ours", base_url),
                 ours_side(ours_exe, tmp / "warm", base_url, warm=True),
                 theirs_side(theirs_exe, tmp / "theirs", base_url),
                 Side("litellm import", [str(ours_exe.parent / "python"), "-X", "importtime",
                                         "-c", "import litellm"],
                      clean_env(tmp / "import") | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"})]
        print("[bench] warm-up ...", file=sys.stderr)
        for side in sides:
            run_side(side, notes, tmp / "work", timed=False)
        for r in range(rounds):
            print(f"[bench] round {r + 1}/{rounds}", file=sys.stderr)
            for side in sides if r % 2 == 0 else sides[::-1]:
                run_side(side, notes, tmp / "work", timed=True)
    finally:
        subprocess.run([str(ours_exe), "daemon", "stop"], env=sides[1].env, check=False,
                       capture_output=True, timeout=60)
        fake.send_signal(signal.SIGTERM)
        output, _ = fake.communicate(timeout=30)
    summary: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    for side in sides[:3]:
        calls = {t: n for t, n in summary["chats"].items() if t.startswith(side.label + "-")}
        if len(calls) != side.runs or set(calls.values()) != {2}:
            sys.exit(f"[bench] ABORT: {side.label}: expected 2 chat requests in each of "
                     f"{side.runs} runs, got {calls}")
    if summary["problems"] or "untagged" in summary["chats"]:
        sys.exit(f"[bench] ABORT: fake LLM: {summary}")
    return sides, summary


@dataclass
class LoopClock:
    """When each model call of a loop turn began, and the model and tool time inside."""

    starts: list[float] = field(default_factory=list)
    model_s: list[float] = field(default_factory=list)
    tool_s: list[float] = field(default_factory=list)
    foreign: int = 0
    """Model calls that did not come from the measured turn (its tools lack ``bench_noop``)."""

    def reset(self) -> None:
        for samples in (self.starts, self.model_s, self.tool_s):
            samples.clear()

    def overheads_ms(self, iterations: int) -> list[float]:
        """Each iteration's time from one model call to the next, minus model and tool."""
        return [(self.starts[i + 1] - self.starts[i] - self.model_s[i] - self.tool_s[i]) * 1000
                for i in range(iterations)]


def instant_tools(clock: LoopClock, iterations: int) -> tuple[Any, Any]:
    """A model client that asks for ``bench_noop`` ``iterations`` times, then answers
    "done", and the ``bench_noop`` tool; both time themselves into ``clock``."""
    from hermes.models.base import ModelClient
    from hermes.models.types import ModelReply, StreamCallbacks, ToolCall
    from hermes.tools.registry import ToolSpec

    class InstantModel(ModelClient):
        model = "bench-instant"

        def complete(self, messages: list[dict[str, Any]],
                     tools: list[dict[str, Any]] | None = None, *, stream: bool = False,
                     callbacks: StreamCallbacks | None = None, **params: Any) -> ModelReply:
            if not any(t.get("function", {}).get("name") == "bench_noop" for t in tools or ()):
                # Another caller of the runtime's model (a background review, a title,
                # compression) would shift the counts and the clock of the measured turn.
                clock.foreign += 1
                return ModelReply("not the measured turn")
            clock.starts.append(begin := time.perf_counter())
            n = len(clock.starts)
            reply = (ModelReply("", (ToolCall(f"call_{n}", "bench_noop", "{}"),))
                     if n <= iterations else ModelReply("done"))
            clock.model_s.append(time.perf_counter() - begin)
            return reply

    def noop(args: dict[str, Any], **_: Any) -> str:
        begin = time.perf_counter()
        result = '{"ok": true}'
        clock.tool_s.append(time.perf_counter() - begin)
        return result

    return InstantModel(), ToolSpec(name="bench_noop", toolset="todo", description="No-op.",
                                    parameters={"type": "object", "properties": {}}, handler=noop)


def measure_loop(iterations: int, repeats: int = 5) -> dict[str, float]:
    """The agent loop's own time per tool iteration, with an instant model and a no-op tool.

    ``repeats`` turns of ``iterations`` tool calls and a final answer, in one runtime
    built as the CLI builds it. litellm is imported first (a session at any provider
    but an OpenAI-compatible endpoint of one's own loads it), so its one-time import
    is not counted. The learning review is off: a turn of
    ``iterations`` tool calls makes a skills review due (``skill_nudge_iterations``),
    which runs in the background on the same model while the next turn is measured.
    """
    from dependency_injector import providers

    from hermes.agent.factory import Interaction
    from hermes.config import compose_config
    from hermes.container import build_runtime
    from hermes.home import home_from_path
    from hermes.models.litellm_client import import_litellm

    clock = LoopClock()
    model, tool = instant_tools(clock, iterations)
    means: list[float] = []
    turns: list[list[float]] = []
    with tempfile.TemporaryDirectory(prefix="hermes-loop-") as tmp:
        environ = clean_env(Path(tmp))
        ours_side(DEFAULT_OURS, Path(tmp), "http://127.0.0.1:9/v1")  # writes the profile
        home = home_from_path(Path(tmp) / ".hermes")
        home.ensure()
        composed = compose_config(home, environ, [f"agent.max_iterations={iterations + 1}",
                                                  f"environment.cwd={tmp}",
                                                  "learning.enabled=false"])
        with build_runtime(home, composed.config, environ) as runtime:
            runtime.container.model.override(providers.Object(model))
            runtime.container.tools().register(tool)
            import_litellm()
            for _ in range(repeats):
                clock.reset()
                agent = runtime.container.agent_factory().new_session(Interaction(stream=False))
                begin = time.perf_counter()
                result = agent.run_turn("loop")
                wall = time.perf_counter() - begin
                if (result.text, result.iterations) != ("done", iterations + 1):
                    sys.exit(f"[bench] ABORT: the loop turn ended {result}")
                if clock.foreign:
                    sys.exit(f"[bench] ABORT: {clock.foreign} model call(s) beside the "
                             "measured turn (a background review or another caller)")
                means.append((wall - sum(clock.model_s) - sum(clock.tool_s)) * 1000 / iterations)
                turns.append(clock.overheads_ms(iterations))
    every = [ms for turn in turns for ms in turn]
    return {"iterations": iterations, "repeats": repeats, "mean_ms": statistics.median(means),
            "p50_ms": statistics.median(every), "p95_ms": statistics.quantiles(every, n=20)[18],
            "first10_ms": statistics.mean(ms for turn in turns for ms in turn[:10]),
            "last10_ms": statistics.mean(ms for turn in turns for ms in turn[-10:])}


def report(sides: list[Side], fake: dict[str, Any], loop: dict[str, float]) -> list[Any]:
    """Print the figures and the targets; return the checks for the JSON output."""
    ours, warm, theirs, importer = sides
    probes = sum(n for key, n in fake["probes"].items() if key != OURS_KEY)
    ours_probes = fake["probes"].get(OURS_KEY, 0) / (ours.runs + warm.runs)
    rows = [("one-shot median wall ms", f"{ours.median_ms:.0f}", f"{warm.median_ms:.0f}",
             f"{theirs.median_ms:.0f}"),
            ("one-shot peak RSS MiB (client)", f"{ours.peak_rss_mib:.1f}",
             f"{warm.peak_rss_mib:.1f}", f"{theirs.peak_rss_mib:.1f}"),
            ("chat requests per run", "2", "2", "2"),
            ("probe requests per run (404)", f"{ours_probes:.0f}", f"{ours_probes:.0f}",
             f"{probes / theirs.runs:.0f}")]
    print(f"\n| {'measure':<30} | {'ours cold':>9} | {'ours warm':>9} | {'theirs':>8} |")
    print(f"|{'-' * 32}|{'-' * 10}:|{'-' * 10}:|{'-' * 9}:|")
    for name, a, w, b in rows:
        print(f"| {name:<30} | {a:>9} | {w:>9} | {b:>8} |")
    imp = statistics.median(importer.import_ms)
    print(f"\nlitellm import alone (LITELLM_LOCAL_MODEL_COST_MAP=True): -X importtime cumulative "
          f"{imp:.0f} ms = {imp / ours.median_ms:.0%} of ours' one-shot wall; `python -c` wall "
          f"{importer.median_ms:.0f} ms, peak RSS {importer.peak_rss_mib:.1f} MiB. (A cold "
          "one-shot imports it at its first model call: chat_cmd.py.)")
    print(f"agent loop: {loop['repeats']} turns x {loop['iterations']} tool iterations, "
          f"overhead per iteration: mean {loop['mean_ms']:.2f} ms (median of turns), "
          f"p50 {loop['p50_ms']:.2f}, p95 {loop['p95_ms']:.2f}, first 10 "
          f"{loop['first10_ms']:.2f}, last 10 {loop['last10_ms']:.2f}\n")
    checks = [("cold one-shot wall ours / theirs", ours.median_ms / theirs.median_ms,
               WALL_TARGET),
              ("warm one-shot wall ours / theirs", warm.median_ms / theirs.median_ms,
               WARM_TARGET),
              ("warm client peak RSS MiB", warm.peak_rss_mib, CLIENT_RSS_MIB),
              ("loop overhead ms / iteration", loop["mean_ms"], LOOP_TARGET_MS)]
    for name, value, target in checks:
        print(f"{'PASS' if value <= target else 'FAIL'}  {name} = {value:.2f}  "
              f"(target <= {target:.2f})")
    paired = statistics.median(a / b for a, b in zip(ours.wall_ms, theirs.wall_ms, strict=True))
    print(f"info  median of the per-round ratios ours / theirs = {paired:.2f}")
    return [{"name": n, "value": v, "target": t, "pass": v <= t} for n, v, t in checks]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=f"One-shot (`hermes -z`) wall time and peak RSS, hermes-runtime vs "
                    f"{THEIRS_SPEC}, against one fake LLM; and the agent loop's overhead per "
                    "tool iteration.",
        epilog=f"Targets: cold one-shot wall ours/theirs <= {WALL_TARGET}; warm (through "
               f"the server) <= {WARM_TARGET}, its client's peak RSS <= {CLIENT_RSS_MIB} MiB; "
               f"loop overhead <= {LOOP_TARGET_MS} ms per iteration. Exits 0 after measuring, "
               "even when a "
               "target fails (shown as FAIL). Exits 1 when a run misbehaves (a wrong answer "
               "or the wrong number of model calls).")
    ap.add_argument("--rounds", type=int, default=10, help="timed rounds (default: 10)")
    add_common_arguments(ap)
    ap.add_argument("--loop-iterations", type=int, default=200, metavar="N",
                    help="tool iterations per in-process loop turn (default: 200)")
    ap.add_argument("--serve-fake", type=Path, help=argparse.SUPPRESS)  # the fake's process
    args = ap.parse_args()
    if args.serve_fake:
        return serve_fake(args.serve_fake)
    if args.rounds < 1 or args.loop_iterations < 20:
        ap.error("--rounds must be >= 1 and --loop-iterations >= 20")
    if not os.access(args.ours, os.X_OK):
        ap.error(f"{args.ours} is not executable (run `uv sync --frozen --group test`?)")
    theirs_exe: Path = args.theirs or ensure_theirs(DEFAULT_THEIRS_VENV)
    if not os.access(theirs_exe, os.X_OK):
        ap.error(f"{theirs_exe} is not executable")

    with tempfile.TemporaryDirectory(prefix="hermes-oneshot-") as tmp:
        sides, fake = measure_oneshots(args.ours, theirs_exe, args.rounds, Path(tmp))
    print("[bench] in-process agent loop ...", file=sys.stderr)
    loop = measure_loop(args.loop_iterations)
    print(f"\n{args.rounds} rounds; nproc={len(os.sched_getaffinity(0))}; "
          f"python {platform.python_version()}; ours={args.ours}; theirs={theirs_exe}")
    checks = report(sides, fake, loop)
    if args.json:
        sides_raw = {s.label: {"argv": s.argv, "wall_ms": s.wall_ms, "maxrss_kib": s.maxrss_kib,
                               "import_ms": s.import_ms} for s in sides}
        args.json.write_text(json.dumps(
            {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rounds": args.rounds,
             "python": platform.python_version(), "sides": sides_raw, "fake": fake,
             "loop": loop, "checks": checks}, indent=2) + "\n")
        print(f"\nraw figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
