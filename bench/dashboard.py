"""Dashboard benchmark: the sessions page's server-side queries on a large ``state.db``.

Run from the repository root:

    .venv/bin/python bench/dashboard.py                     # 100,000 sessions, 2M messages
    .venv/bin/python bench/dashboard.py --scale 0.05        # a quick run on 5k / 100k
    .venv/bin/python bench/dashboard.py --json /tmp/dashboard.json --no-cli

The database is generated once (schema by the real migrations through ``SessionStore``,
rows by ``executemany`` in one transaction with the full-text indexes rebuilt at the end,
as a bulk import would) into a temporary directory beside the cache, then moved to
``$HERMES_BENCH_CACHE`` (default ``<tmp>/hermes-bench``) under a name carrying the
generator's version and size: later runs reuse it. Bump ``GENERATOR_VERSION`` whenever
the generator changes. Sizes: 8 sources weighted as a gateway home sees them, sessions of
2 to a few hundred messages (a few very long ones), about 8 % continued after compression
and 4 % sub-agents' sessions; messages of 12 to 60 words from a Zipf vocabulary
(``bench/sessiondb.py``'s), some CJK, rare words, tool calls with their results.

Measured in-process, warm (one untimed pass first), with ``time.perf_counter`` around
the data layer's call (``hermes.dashboard.queries``): that is the page's server time
short of template rendering. Targets (issue 29): the first page of sessions <= 50 ms
(p95), a search <= 100 ms (p95 over the query mix). Also reported, without target:
later pages, filtered pages, a long session's transcript and a lineage tree, and for
comparison ``hermes sessions list`` / ``search`` run as the CLI (wall time, start-up
included) and their store calls in-process. Browser-side figures (first contentful paint,
first token in the page) are measured by ``MEASURES`` entries added later next to these.
Exit status is 0 even if a target fails: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessiondb import message_text

REPO = Path(__file__).resolve().parent.parent
GENERATOR_VERSION = 1
SESSIONS = 100_000
MESSAGES = 2_000_000
LONG_SESSION = 5_000
"""Messages of the one long session whose transcript is measured."""
SOURCES = {"cli": 45, "telegram": 18, "cron": 10, "discord": 8, "slack": 7, "api_server": 6,
           "webhook": 4, "email": 2}
SPAN_S = 2 * 365 * 86400
"""Sessions started over the last two years."""
TOOLS = ("terminal", "read_file", "write_file", "web_search", "web_extract", "patch")
QUERIES = {
    "common word": ["agent", "error", "file", "config", "session", "docker"],
    "medium word": ["retry", "gateway", "telegram", "backoff", "permission", "yaml"],
    "rare word": ["zebrafish", "quasar", "marmalade", "obsidian", "w2999x", "w1500x"],
    "two words": ["docker error", "deploy config", "cron worker", "memory leak"],
    "phrase": ['"connection refused"', '"unit tests"', '"make test"', '"the gateway"'],
    "prefix": ["deplo*", "conf*", "kube*", "telegr*"],
    "OR": ["postgres OR sqlite", "zebrafish OR quasar"],
    "tool name": ["web_search", "read_file"],
    "punctuation": ["error: can't connect (port 8080)", "C++ -> rust?", "<script>"],
    "CJK": ["北京", "北京出差", "服务器日志", "東京"],
    "substring": ["ploym", "bern", "w150", "ateway", "onfi", "sqli"],
    "short substring": ["ku", "gw", "rr"],
    "no match": ["xylophonequartz", "nonexistentword"],
}
PAGE_P95_MS = 50.0
SEARCH_P95_MS = 100.0


# -- the database ---------------------------------------------------------------------


def cache_path(sessions: int, messages: int) -> Path:
    base = Path(os.environ.get("HERMES_BENCH_CACHE") or Path(tempfile.gettempdir())
                / "hermes-bench")
    return base / f"dashboard-v{GENERATOR_VERSION}-{sessions}s-{messages}m" / "state.db"


def session_sizes(rng: random.Random, sessions: int, messages: int) -> list[int]:
    """Messages per session summing to ``messages``: mostly short, a long tail, and
    session 1 (the one measured) ``LONG_SESSION`` long."""
    raw = [2 + int(rng.paretovariate(1.6) * 6) for _ in range(sessions)]
    long = min(LONG_SESSION, messages // 4)
    scale = (messages - long) / (sum(raw) - raw[1])
    sizes = [max(1, int(n * scale)) for n in raw]
    sizes[1] = long
    sizes[0] += messages - sum(sizes)  # the rounding remainder
    while sizes[0] < 1:  # tiny scales: take the remainder from the biggest sessions
        biggest = max(range(2, sessions), key=sizes.__getitem__)
        sizes[biggest] -= 1 - sizes[0]
        sizes[0] = 1
    return sizes


def session_rows(rng: random.Random, sessions: int, now: float) -> list[dict[str, Any]]:
    """The sessions, oldest first, with their lineage links (totals filled in later)."""
    starts = sorted(now - rng.random() * SPAN_S for _ in range(sessions))
    sources, weights = list(SOURCES), list(SOURCES.values())
    rows: list[dict[str, Any]] = []
    for i, started in enumerate(starts):
        row = {"id": f"{rng.getrandbits(128):032x}", "source": rng.choices(sources, weights)[0],
               "model": "gpt-4o", "title": f"Session {i}: " + message_text(rng)[:40],
               "parent_id": None, "started_at": started, "end_reason": "completed"}
        draw = rng.random()
        if i and draw < 0.08:  # continues the previous session after compression
            parent = rows[-1]
            parent["end_reason"] = "compression"
            row.update(source=parent["source"], title=parent["title"], parent_id=parent["id"])
        elif i > 10 and draw < 0.12:  # a sub-agent of a recent session
            row.update(parent_id=rows[rng.randrange(i - 10, i)]["id"], title=None)
        rows.append(row)
    return rows


def message_rows(rng: random.Random, session: dict[str, Any], count: int, first_id: int
                 ) -> Iterator[tuple[Any, ...]]:
    """A session's messages: user, assistant (a tool call every third), tool result."""
    at = session["started_at"]
    pending: str | None = None
    for k in range(count):
        at += rng.uniform(1, 90)
        calls = call_id = name = None
        tokens: tuple[int | None, int | None] = (None, None)
        if pending is not None:
            role, call_id, name, pending = "tool", pending, rng.choice(TOOLS), None
            text = message_text(rng) + " " + message_text(rng)
        elif k % 2 == 0:
            role, text = "user", message_text(rng)
        else:
            role, text = "assistant", message_text(rng)
            tokens = (rng.randint(500, 6000), rng.randint(20, 900))
            if rng.random() < 0.33:
                pending = f"call_{first_id + k}"
                function = {"name": rng.choice(TOOLS),
                            "arguments": json.dumps({"command": "make test"})}
                calls = json.dumps([{"id": pending, "type": "function", "function": function}])
        if rng.random() < 0.0005:
            text += " <script>alert(1)</script>"
        yield (first_id + k, session["id"], role, text, calls, call_id, name, *tokens, at)


def generate(path: Path, sessions: int, messages: int, seed: int = 29) -> None:
    """Build the database in a temporary directory beside ``path``, then move it there."""
    from hermes.sessions import SessionStore

    path.parent.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent.parent, prefix=".building-"))
    try:
        SessionStore(tmp / "state.db").open().close()  # the schema, by the real migrations
        fill(tmp / "state.db", random.Random(seed), sessions, messages)
        shutil.rmtree(path.parent, ignore_errors=True)
        tmp.rename(path.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


INSERT_SESSION = ("INSERT INTO sessions (id, source, model, title, parent_id, started_at, "
                  "updated_at, ended_at, end_reason, message_count, input_tokens, "
                  "output_tokens, cost_usd) VALUES (:id, :source, :model, :title, :parent_id, "
                  ":started_at, :updated_at, :ended_at, :end_reason, :message_count, "
                  ":input_tokens, :output_tokens, :cost_usd)")
INSERT_MESSAGE = ("INSERT INTO messages (id, session_id, role, content, tool_calls, "
                  "tool_call_id, tool_name, input_tokens, output_tokens, created_at) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def fill(db: Path, rng: random.Random, sessions: int, messages: int) -> None:
    """Rows in one transaction; the FTS triggers are dropped for it and the two indexes
    rebuilt once at the end (what a bulk import does), then the triggers restored."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    triggers = [sql for (sql,) in conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_%'")]
    conn.execute("BEGIN")
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' "
                                "AND name LIKE 'messages_%'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    rows = session_rows(rng, sessions, time.time())
    next_id = 1
    for row, count in zip(rows, session_sizes(rng, sessions, messages), strict=True):
        batch = list(message_rows(rng, row, count, next_id))
        conn.executemany(INSERT_MESSAGE, batch)
        next_id += count
        _totals(row, batch, rng)
    conn.executemany(INSERT_SESSION, rows)
    for table in ("messages_fts", "messages_trigram"):
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    for sql in triggers:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def _totals(row: dict[str, Any], batch: list[tuple[Any, ...]], rng: random.Random) -> None:
    tokens_in = sum(m[7] or 0 for m in batch)
    tokens_out = sum(m[8] or 0 for m in batch)
    last = batch[-1][-1]
    row.update(message_count=len(batch), input_tokens=tokens_in, output_tokens=tokens_out,
               updated_at=last, ended_at=last,
               cost_usd=None if rng.random() < 0.02 else
                (tokens_in * 2.5 + tokens_out * 10) / 1e6)


# -- measuring ------------------------------------------------------------------------


@dataclass
class Figure:
    name: str
    times_ms: list[float]
    target_ms: float | None = None

    @property
    def p50(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def p95(self) -> float:
        ordered = sorted(self.times_ms)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    def line(self) -> str:
        verdict = "" if self.target_ms is None else \
            ("  PASS" if self.p95 <= self.target_ms else "  FAIL") + \
            f" (target p95 <= {self.target_ms:g} ms)"
        return (f"{self.name:44} n={len(self.times_ms):3}  p50 {self.p50:8.2f} ms  "
                f"p95 {self.p95:8.2f} ms  max {max(self.times_ms):8.2f} ms{verdict}")


def timed(call: Callable[[], Any], repeat: int = 1) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def page_figures(store: Any, rounds: int) -> list[Figure]:
    from hermes.dashboard import queries

    first = queries.session_page(store)
    timed(lambda: queries.session_page(store))  # warm-up
    figures = [Figure("sessions page: first page", timed(lambda: queries.session_page(store),
                                                          rounds), PAGE_P95_MS)]
    later, cursor = [], first.next_cursor
    for _ in range(rounds):  # walk the next pages one after the other
        start = time.perf_counter()
        page = queries.session_page(store, cursor=cursor)
        later.append((time.perf_counter() - start) * 1000)
        cursor = page.next_cursor
    figures.append(Figure("sessions page: pages 2.., following cursors", later))
    middle = store.list_sessions(limit=1, after=None, until=_midpoint(store))[0]
    deep = f"{middle.started_at!r}_{middle.id}"
    figures.append(Figure("sessions page: a page half-way down",
                          timed(lambda: queries.session_page(store, cursor=deep), rounds)))
    figures.append(Figure("sessions page: source=telegram, first page", timed(
        lambda: queries.session_page(store, source="telegram"), rounds)))
    figures.append(Figure("sessions page: source=email, first page", timed(
        lambda: queries.session_page(store, source="email"), rounds)))
    since = time.time() - 7 * 86400
    figures.append(Figure("sessions page: last 7 days, cli", timed(
        lambda: queries.session_page(store, source="cli", since=since), rounds)))
    return figures


def _midpoint(store: Any) -> float:
    (low, high), = store.conn.execute("SELECT min(started_at), max(started_at) FROM sessions")
    return float((low + high) / 2)


def search_figures(store: Any) -> list[Figure]:
    from hermes.dashboard import queries

    every = [q for group in QUERIES.values() for q in group]
    for query in every:  # warm-up
        queries.search(store, query)
    figures = [Figure(f"search: {kind}", [t for q in group
                                          for t in timed(lambda q=q: queries.search(store, q))])
               for kind, group in QUERIES.items()]
    overall = [t for f in figures for t in f.times_ms]
    return [Figure(f"search: all {len(every)} queries", overall, SEARCH_P95_MS), *figures]


def session_figures(store: Any, rounds: int) -> list[Figure]:
    from hermes.dashboard import queries

    long_id, = store.conn.execute("SELECT id FROM sessions ORDER BY "
                                  "abs(message_count - ?) LIMIT 1", [LONG_SESSION]).fetchone()
    longest_id, = store.conn.execute("SELECT id FROM sessions ORDER BY message_count DESC "
                                     "LIMIT 1").fetchone()
    deep_id, = store.conn.execute(
        "SELECT parent_id FROM sessions WHERE parent_id IS NOT NULL GROUP BY parent_id "
        "ORDER BY count(*) DESC LIMIT 1").fetchone()
    figures = []
    for label, session_id in (("long", long_id), ("longest", longest_id)):
        count = store.get_session(session_id).message_count
        figures.append(Figure(f"transcript: {count} messages ({label} session)", timed(
            lambda s=session_id: queries.transcript(store, s), max(3, rounds // 10))))
    figures.append(Figure("transcript: a part of 200 (longest session)", timed(
        lambda: queries.transcript(store, longest_id, limit=200), rounds)))
    return [*figures, Figure(f"lineage: tree of {queries.lineage(store, deep_id).size} sessions",
                             timed(lambda: queries.lineage(store, deep_id), rounds))]


def cli_figures(db: Path, store: Any, rounds: int) -> list[Figure]:
    """``hermes sessions list/search`` as a user runs them, and their store calls."""
    env = {**os.environ, "HERMES_HOME": str(db.parent)}

    def run(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "hermes", "sessions", *args], env=env,
                       check=True, capture_output=True)

    runs = max(3, rounds // 10)
    run("list")  # warm-up
    return [Figure("CLI: hermes sessions list (wall)", timed(lambda: run("list"), runs)),
            Figure("CLI: hermes sessions search error (wall)",
                   timed(lambda: run("search", "error"), runs)),
            Figure("CLI: hermes sessions search ploym (wall)",
                   timed(lambda: run("search", "ploym"), runs)),
            Figure("store: list_sessions(limit=50)",
                   timed(lambda: store.list_sessions(), rounds)),
            Figure("store: search('error')", timed(lambda: store.search("error"), rounds))]


MEASURES: dict[str, Callable[[Path, Any, argparse.Namespace], list[Figure]]] = {
    "pages": lambda db, store, args: page_figures(store, args.rounds),
    "search": lambda db, store, args: search_figures(store),
    "session": lambda db, store, args: session_figures(store, args.rounds),
    "cli": lambda db, store, args: cli_figures(db, store, args.rounds),
}
"""Each group of figures: a browser-side group (first contentful paint, first token)
goes here too, taking the same database."""


@contextmanager
def opened(db: Path) -> Iterator[Any]:
    from hermes.sessions import SessionStore

    with SessionStore(db) as store:
        yield store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="Fraction of 100,000 sessions / 2M messages (default 1).")
    parser.add_argument("--rounds", type=int, default=50, help="Timed calls per page figure.")
    parser.add_argument("--only", choices=list(MEASURES), action="append")
    parser.add_argument("--no-cli", action="store_true", help="Skip the CLI comparison.")
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    args = parser.parse_args()
    sessions, messages = int(SESSIONS * args.scale), int(MESSAGES * args.scale)
    db = cache_path(sessions, messages)
    if not db.exists():
        print(f"generating {sessions:,} sessions / {messages:,} messages in {db.parent} ...",
              flush=True)
        start = time.monotonic()
        generate(db, sessions, messages)
        print(f"generated in {time.monotonic() - start:.0f} s", flush=True)
    print(f"database: {db} ({db.stat().st_size / 2**20:,.0f} MiB); "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    chosen = args.only or [name for name in MEASURES if not (args.no_cli and name == "cli")]
    figures: list[Figure] = []
    with opened(db) as store:
        for name in chosen:
            for figure in MEASURES[name](db, store, args):
                print(figure.line(), flush=True)
                figures.append(figure)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps([{"name": f.name, "p50_ms": f.p50, "p95_ms": f.p95,
                                          "target_ms": f.target_ms} for f in figures], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
