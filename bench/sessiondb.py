"""Side-by-side session database benchmark: hermes-runtime (ours) vs hermes-agent 0.19.0.

Run from the repository root:

    .venv/bin/python bench/sessiondb.py                        # 8 x 2,000 writes, 200k search
    .venv/bin/python bench/sessiondb.py --rounds 3 --json /tmp/sessiondb.json
    .venv/bin/python bench/sessiondb.py --theirs-python /work/ref-venv/bin/python

Two phases, each on a fresh ``state.db`` in a temporary directory, ours and theirs in
alternating order. Every side runs in its own subprocesses with its own interpreter;
hermes-agent is never imported into ours (its venv is ``bench/.venvs/hermes-agent-0.19.0``,
created on first use as ``bench/cli_startup.py`` does).

1. Concurrent writes: one process creates the database first (in real use the gateway
   made it long ago; many processes opening a brand-new file at once is a start-up race,
   not the steady state measured here). Then P processes each create a session, wait at
   a barrier and persist M messages one by one, alternating user and assistant; every
   assistant message carries token usage and cost, every fourth one a tool call. Ours:
   ``add_message(..., usage=)``, one transaction per message, totals included. Theirs,
   as its agent loop does it: ``append_message`` per message plus
   ``update_token_counts`` per assistant message. A third side, theirs-bare (for
   information), is hermes-agent with ``append_message`` only, no usage totals.
   Reported: messages/s over the wall time from the first start to the last finish,
   lost rows (messages a writer set out to persist that are not in the database
   afterwards) and lock errors (calls that raised "locked"/"busy" after the store's own
   retries).
2. Search: each side builds a 200k-message corpus (1,000 sessions x 200 messages; every
   fourth session continues the previous one) through its store's own bulk API (ours
   ``add_messages``, theirs ``replace_messages`` on a new session: one transaction per
   session either way), one side after the other. Then both workers, kept running,
   answer the same query mix (words of several frequencies, AND, OR, phrases, prefixes,
   punctuation, CJK, a substring; limit 20) in alternation, so machine noise lands on
   both alike, after one untimed warm-up pass. Reported: p50/p95 latency of the
   store's search call, measured inside the worker.

Targets: throughput >= 1.0x theirs, search p95 <= 1.0x theirs, zero lost rows, zero lock
errors. Exit status is 0 even if a target fails: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OURS_PYTHON = REPO / ".venv" / "bin" / "python"
WRITE_SIDES = ("ours", "theirs", "theirs-bare")
"""theirs-bare: hermes-agent writing messages only, without its usage totals (information)."""
SESSIONS = 1000
PER_SESSION = 200
QUERIES = {
    "common word": ["agent", "error", "kubernetes"],
    "medium word": ["retry", "gateway", "telegram"],
    "rare word": ["zebrafish", "quasar"],
    "two words": ["docker error", "deploy config"],
    "phrase": ['"connection refused"', '"unit tests"'],
    "prefix": ["deplo*", "conf*"],
    "OR": ["postgres OR sqlite"],
    "punctuation": ["error: can't connect (port 8080)", "C++ -> rust?"],
    "CJK 2 chars": ["北京"],
    "CJK 4 chars": ["北京出差"],
    "substring": ["ploym"],
}
TECH = ["agent", "error", "file", "deploy", "config", "docker", "kubernetes", "latency",
        "migration", "postgres", "sqlite", "python", "rust", "build", "test", "unit", "tests",
        "connection", "refused", "timeout", "server", "client", "request", "response", "cache",
        "memory", "skill", "session", "token", "model", "prompt", "tool", "call", "result",
        "output", "input", "branch", "commit", "merge", "review", "patch", "release", "version",
        "install", "package", "module", "function", "class", "method", "variable", "loop",
        "retry", "backoff", "lock", "queue", "worker", "cron", "gateway", "telegram", "discord",
        "slack", "profile", "home", "path", "permission", "secret", "key", "value", "json",
        "yaml"]
RARE = ("zebrafish", "quasar", "marmalade", "obsidian")
CJK = ("我明天去北京出差", "请帮我检查一下服务器日志", "東京の天気はどうですか",
       "北京出差的报销流程")


# -- workload (runs under either interpreter: standard library only) ----------------------

VOCABULARY = TECH + [f"w{i}x" for i in range(3000)]
# Zipf (s = 1) over the vocabulary: "agent" is in nearly every message, rank ~60 in a few %.
CUM_WEIGHTS = [sum(1 / (r + 1) for r in range(k + 1)) for k in range(len(VOCABULARY))]


def message_text(rng: random.Random) -> str:
    n = rng.randint(12, 60)
    words = rng.choices(VOCABULARY, cum_weights=CUM_WEIGHTS, k=n)
    if rng.random() < 0.002:
        words.insert(rng.randrange(n), rng.choice(RARE))
    if rng.random() < 0.01:
        words.insert(rng.randrange(n), "deployment")
    if rng.random() < 0.02:
        return rng.choice(CJK) + " " + " ".join(words[:8])
    return " ".join(words).capitalize() + "."


def make_message(rng: random.Random, i: int) -> dict[str, Any]:
    if i % 2 == 0:
        return {"role": "user", "content": message_text(rng)}
    message: dict[str, Any] = {"role": "assistant", "content": message_text(rng),
                               "usage": (rng.randint(500, 4000), rng.randint(20, 800),
                                         round(rng.random() / 100, 6))}
    if i % 8 == 1:
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function", "function": {
            "name": "terminal", "arguments": json.dumps({"command": "make test"})}}]
    return message


class Ours:
    """Adapter over our ``SessionStore`` (imported only in ours' subprocesses)."""

    def __init__(self, db: Path):
        from hermes.sessions import SessionStore, Usage

        self.usage_type = Usage
        self.store = SessionStore(db).open()

    def create(self, parent: str | None = None) -> str:
        return self.store.create_session("bench", "bench-model", parent)

    def _usage(self, message: dict[str, Any]) -> Any:
        if "usage" not in message:
            return None
        tokens_in, tokens_out, cost = message["usage"]
        return self.usage_type(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)

    def write(self, session_id: str, message: dict[str, Any]) -> None:
        self.store.add_message(session_id, message["role"], message["content"],
                               tool_calls=message.get("tool_calls"),
                               usage=self._usage(message))

    def bulk(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self.store.add_messages(session_id, [{**m, "usage": self._usage(m)} for m in messages])

    def search(self, query: str) -> int:
        return len(self.store.search(query, limit=20))


class Theirs:
    """Adapter over hermes-agent's ``SessionDB`` (imported only under its own venv)."""

    def __init__(self, db: Path, *, totals: bool = True):
        from hermes_state import SessionDB

        self.db = SessionDB(db_path=db)
        self.count = 0
        self.totals = totals

    def create(self, parent: str | None = None) -> str:
        self.count += 1
        session_id = f"{os.getpid()}-{self.count}"
        self.db.create_session(session_id, source="bench", model="bench-model",
                               parent_session_id=parent)
        return session_id

    def write(self, session_id: str, message: dict[str, Any]) -> None:
        self.db.append_message(session_id, message["role"], message["content"],
                               tool_calls=message.get("tool_calls"))
        if self.totals and "usage" in message:
            tokens_in, tokens_out, cost = message["usage"]
            self.db.update_token_counts(session_id, input_tokens=tokens_in,
                                        output_tokens=tokens_out, estimated_cost_usd=cost,
                                        model="bench-model", api_call_count=1)

    def bulk(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self.db.replace_messages(session_id, [{k: v for k, v in m.items() if k != "usage"}
                                              for m in messages])

    def search(self, query: str) -> int:
        return len(self.db.search_messages(query, limit=20))


def _is_lock_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return "locked" in text or "busy" in text


def open_side(side: str, db: Path) -> Ours | Theirs:
    if side == "ours":
        return Ours(db)
    return Theirs(db, totals=side != "theirs-bare")


def worker_write(side: str, db: Path, index: int, count: int) -> None:
    """Phase 1 worker: create a session, wait for "go" on stdin, write ``count`` messages."""
    try:
        store = open_side(side, db)
        session_id = store.create()
    except Exception as exc:  # reported: a store that cannot open loses all its messages
        print(json.dumps({"open_error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return
    rng = random.Random(index)
    messages = [make_message(rng, i) for i in range(count)]
    print(json.dumps({"ready": session_id}), flush=True)
    sys.stdin.readline()
    acked = lock_errors = other_errors = 0
    started = time.monotonic()
    for message in messages:
        try:
            store.write(session_id, message)
            acked += 1
        except Exception as exc:  # counted, not fatal: the figure is how many are lost
            if _is_lock_error(exc):
                lock_errors += 1
            else:
                other_errors += 1
    print(json.dumps({"session_id": session_id, "acked": acked, "lock_errors": lock_errors,
                      "other_errors": other_errors, "started": started,
                      "finished": time.monotonic()}), flush=True)


def worker_search(side: str, db: Path, sessions: int) -> None:
    """Phase 2 worker: build the corpus through the store's bulk API, then answer queries.

    Prints ``ready <build seconds>``, then for each JSON query line on stdin one JSON line
    with the search call's latency and hit count, until stdin closes.
    """
    store = open_side(side, db)
    rng = random.Random(2026)
    started = time.monotonic()
    session_id: str | None = None
    for s in range(sessions):
        session_id = store.create(session_id if s % 4 else None)
        store.bulk(session_id, [make_message(rng, i) for i in range(PER_SESSION)])
    print(f"ready {time.monotonic() - started:.3f}", flush=True)
    for line in sys.stdin:
        query = json.loads(line)
        t0 = time.perf_counter()
        hits = store.search(query)
        elapsed = (time.perf_counter() - t0) * 1000
        print(json.dumps({"ms": elapsed, "hits": hits}), flush=True)


# -- driver (ours' interpreter) ------------------------------------------------------------

def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"), PYTHONHASHSEED="0")
    return env


def _spawn(python: Path, args: list[str], home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([str(python), __file__, *args], env=_env(home), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def run_writers(side: str, python: Path, tmp: Path, procs: int, count: int) -> dict[str, Any]:
    """Phase 1 for one side; returns throughput, lost rows and errors."""
    db = tmp / "state.db"
    # As in real use, the database exists before the writers start (the gateway made it).
    subprocess.run([str(python), __file__, "worker-init", side, str(db)], check=True,
                   env=_env(tmp))
    workers = [_spawn(python, ["worker-write", side, str(db), str(i), str(count)], tmp)
               for i in range(procs)]
    starts = [_readline_json(w) for w in workers]  # the barrier: every store open
    for w in workers:
        assert w.stdin is not None
        w.stdin.write("go\n")
        w.stdin.flush()
    reports = [_readline_json(w) if "ready" in start else start
               for w, start in zip(workers, starts, strict=True)]
    for w in workers:
        w.wait(timeout=600)
    ok = [r for r in reports if "acked" in r]
    with closing(sqlite3.connect(db)) as conn:  # a bare `with` would not close it
        present = dict(conn.execute("SELECT session_id, count(*) FROM messages GROUP BY 1"))
    stored = sum(present.get(r["session_id"], 0) for r in ok)
    wall = max(r["finished"] for r in ok) - min(r["started"] for r in ok) if ok else 0.0
    open_errors = [r["open_error"] for r in reports if "open_error" in r]
    return {"messages": procs * count, "acked": sum(r["acked"] for r in ok), "stored": stored,
            "lost": max(0, procs * count - stored),
            "lock_errors": sum(r["lock_errors"] for r in ok)
            + sum(_is_lock_error(Exception(e)) for e in open_errors),
            "other_errors": sum(r["other_errors"] for r in ok), "open_errors": open_errors,
            "wall_s": wall, "per_s": stored / wall if wall else 0.0}


def _readline_json(worker: subprocess.Popen[str]) -> dict[str, Any]:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    if not line:
        sys.exit(f"[bench] ABORT: a writer exited without a report (exit {worker.wait()})")
    return dict(json.loads(line))


class SearchWorker:
    """One side's search worker process: the corpus is built, queries go one at a time."""

    def __init__(self, side: str, python: Path, tmp: Path, sessions: int):
        self.side = side
        self.db = tmp / "state.db"
        self.proc = _spawn(python, ["worker-search", side, str(self.db), str(sessions)], tmp)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        ready = self.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit(f"[bench] ABORT: {side} search worker failed while building the corpus")
        self.build_s = float(ready[1])

    def ask(self, query: str) -> dict[str, Any]:
        self.stdin.write(json.dumps(query) + "\n")
        self.stdin.flush()
        return dict(json.loads(self.stdout.readline()))

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=60)


def run_search(workers: dict[str, SearchWorker], rounds: int) -> dict[str, Any]:
    """Interleave the sides query by query, so machine noise lands on both alike."""
    queries = [(kind, q) for kind, qs in QUERIES.items() for q in qs]
    results: dict[str, Any] = {side: {"build_s": w.build_s, "hits": {},
                                      "samples_ms": {kind: [] for kind in QUERIES}}
                               for side, w in workers.items()}
    sides = list(workers)
    for _kind, query in queries:  # warm-up, untimed
        for side in sides:
            results[side]["hits"][query] = workers[side].ask(query)["hits"]
    for r in range(rounds):
        for i, (kind, query) in enumerate(queries if r % 2 == 0 else queries[::-1]):
            for side in sides if (r + i) % 2 == 0 else sides[::-1]:
                results[side]["samples_ms"][kind].append(workers[side].ask(query)["ms"])
    for side, w in workers.items():
        every = sorted(x for xs in results[side]["samples_ms"].values() for x in xs)
        results[side]["p50_ms"] = statistics.median(every)
        results[side]["p95_ms"] = every[max(0, int(round(0.95 * len(every))) - 1)]
        results[side]["db_mib"] = w.db.stat().st_size / 2**20
    return results


def _fresh(tmp: Path, name: str) -> Path:
    path = tmp / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def measure(args: argparse.Namespace, pythons: dict[str, Path], tmp: Path) -> dict[str, Any]:
    writes: dict[str, list[dict[str, Any]]] = {side: [] for side in WRITE_SIDES}
    for r in range(args.rounds):
        for side in WRITE_SIDES if r % 2 == 0 else WRITE_SIDES[::-1]:
            print(f"[bench] writes round {r + 1}/{args.rounds}: {side}", file=sys.stderr)
            writes[side].append(run_writers(side, pythons[side], _fresh(tmp, side),
                                            args.procs, args.messages))
    workers: dict[str, SearchWorker] = {}
    try:
        for side in ("ours", "theirs"):  # built one after the other: build times are clean
            print(f"[bench] search: {side} builds {args.sessions * PER_SESSION:,} messages",
                  file=sys.stderr)
            workers[side] = SearchWorker(side, pythons[side], _fresh(tmp, side), args.sessions)
        print("[bench] search: timing queries", file=sys.stderr)
        searches = run_search(workers, args.search_rounds)
    finally:
        for worker in workers.values():
            worker.close()
    return {"writes": writes, "search": searches}


def _median_write(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return sorted(runs, key=lambda run: run["per_s"])[len(runs) // 2]


def _print_writes(writes: dict[str, list[dict[str, Any]]]) -> None:
    print(f"\n| {'writes':<11} | {'msgs/s (median)':>15} | {'range over rounds':>17} | "
          f"{'lost rows':>9} | {'lock errors':>11} |")
    print(f"|{'-' * 13}|{'-' * 16}:|{'-' * 18}:|{'-' * 10}:|{'-' * 12}:|")
    for side, runs in writes.items():
        rates = sorted(run["per_s"] for run in runs)
        print(f"| {side:<11} | {_median_write(runs)['per_s']:>15.0f} | "
              f"{f'{rates[0]:.0f}-{rates[-1]:.0f}':>17} | {sum(r['lost'] for r in runs):>9} | "
              f"{sum(r['lock_errors'] for r in runs):>11} |")
    for side, runs in writes.items():
        for error in {e for run in runs for e in run["open_errors"]}:
            print(f"  {side}: a writer could not open the store: {error}")


def _print_search(s: dict[str, Any]) -> None:
    print(f"\n| {'search':<11} | {'p50 ms':>8} | {'p95 ms':>8} | {'corpus build s':>14} | "
          f"{'db MiB':>7} |")
    print(f"|{'-' * 13}|{'-' * 9}:|{'-' * 9}:|{'-' * 15}:|{'-' * 8}:|")
    for side in ("ours", "theirs"):
        print(f"| {side:<11} | {s[side]['p50_ms']:>8.2f} | {s[side]['p95_ms']:>8.2f} | "
              f"{s[side]['build_s']:>14.1f} | {s[side]['db_mib']:>7.0f} |")
    print("\nper query kind: median ms ours / theirs; hits (limit 20) for its first query")
    for kind, queries in QUERIES.items():
        medians = [statistics.median(s[side]["samples_ms"][kind]) for side in ("ours", "theirs")]
        print(f"  {kind:<12} {medians[0]:8.2f} / {medians[1]:8.2f}   hits "
              f"{s['ours']['hits'][queries[0]]} / {s['theirs']['hits'][queries[0]]}")


def report(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Print the tables and the target verdicts; return the verdicts."""
    writes, s = raw["writes"], raw["search"]
    _print_writes(writes)
    _print_search(s)
    rate = {side: _median_write(runs)["per_s"] for side, runs in writes.items()}
    verdicts: list[tuple[str, float, str, float | None]] = [
        ("throughput ours/theirs", rate["ours"] / rate["theirs"], ">=", 1.0),
        ("search p95 ours/theirs", s["ours"]["p95_ms"] / s["theirs"]["p95_ms"], "<=", 1.0),
        ("lost rows, ours, all rounds", sum(r["lost"] for r in writes["ours"]), "<=", 0),
        ("lock errors, ours, all rounds", sum(r["lock_errors"] for r in writes["ours"]), "<=",
         0),
        ("throughput ours/theirs-bare", rate["ours"] / rate["theirs-bare"], "", None),
    ]
    print()
    out = []
    for name, value, op, target in verdicts:
        ok = None if target is None else value >= target if op == ">=" else value <= target
        verdict = "info" if ok is None else "PASS" if ok else "FAIL"
        goal = "no target" if target is None else f"target {op} {target}"
        print(f"{verdict:<4}  {name} = {value:.2f}  ({goal})")
        out.append({"name": name, "value": value, "target": goal, "verdict": verdict})
    return out


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "worker-init":
        open_side(sys.argv[2], Path(sys.argv[3]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "worker-write":
        worker_write(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "worker-search":
        worker_search(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=8, help="writer processes (default: 8)")
    ap.add_argument("--messages", type=int, default=2000, help="messages per writer (2000)")
    ap.add_argument("--rounds", type=int, default=3, help="write rounds per side (default: 3)")
    ap.add_argument("--search-rounds", type=int, default=10,
                    help="timed passes over the query mix (default: 10)")
    ap.add_argument("--sessions", type=int, default=SESSIONS,
                    help=f"search corpus sessions of {PER_SESSION} messages (default: {SESSIONS})")
    ap.add_argument("--theirs-python", type=Path, default=None,
                    help="python of a venv with hermes-agent 0.19.0 (default: created on "
                         "demand in bench/.venvs/hermes-agent-0.19.0)")
    ap.add_argument("--json", type=Path, metavar="PATH", help="also write raw figures here")
    args = ap.parse_args()
    if min(args.procs, args.messages, args.rounds, args.search_rounds, args.sessions) < 1:
        ap.error("counts must be >= 1")
    sys.path.insert(0, str(Path(__file__).parent))
    from cli_startup import DEFAULT_THEIRS_VENV, ensure_theirs

    theirs = args.theirs_python or ensure_theirs(DEFAULT_THEIRS_VENV).parent / "python"
    pythons = {"ours": OURS_PYTHON, "theirs": theirs, "theirs-bare": theirs}
    tmp = Path(tempfile.mkdtemp(prefix="hermes-sessiondb-"))
    try:
        raw = measure(args, pythons, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{args.procs} writers x {args.messages} messages, {args.rounds} rounds (median "
          f"shown); search over {args.sessions * PER_SESSION:,} messages, {args.search_rounds} "
          f"passes; nproc={len(os.sched_getaffinity(0))}; python {platform.python_version()}; "
          f"sqlite {sqlite3.sqlite_version}; theirs={theirs}")
    verdicts = report(raw)
    if args.json:
        raw.update(date=time.strftime("%Y-%m-%dT%H:%M:%S%z"), argv=sys.argv, verdicts=verdicts,
                   pythons={k: str(v) for k, v in pythons.items()})
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
        print(f"raw figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
