"""Side-by-side API server load benchmark: ``hermes gateway run`` of hermes-runtime (ours) vs
hermes-agent 0.19.0's gateway with its ``api_server`` platform (theirs).

Run from the repository root:

    .venv/bin/python bench/api_load.py                     # 40 requests per concurrency
    .venv/bin/python bench/api_load.py --requests 80 --json /tmp/api_load.json
    .venv/bin/python bench/api_load.py --only theirs       # one side, no ratios

One fake LLM (``tests.fakellm`` in a subprocess, as in ``oneshot.py``) answers the
first request of every conversation with one ``read_file`` call of a small file and,
once the tool result is in the conversation, with a fixed answer. Each benchmark
request is ``POST /v1/chat/completions`` with one tagged user message; it counts only
when the status is 200 and the content is that answer.

Ours: ``hermes gateway run`` with a temporary home whose ``config.yaml`` picks the
``custom`` provider at the fake and the ``api_server`` platform on a free port; the
keys live in its ``.env``. The model id is the profile name (``default``). Theirs:
``hermes gateway run`` with ``API_SERVER_ENABLED/KEY/HOST/PORT`` in its environment and
a ``config.yaml`` whose ``model`` section points ``custom`` at the fake with a
``context_length`` (no OpenRouter/models.dev look-up), ``security.allow_lazy_installs:
false`` (else its gateway pip-installs missing platform dependencies) and
``security.tirith_enabled: false`` (else every start downloads the tirith command
scanner from GitHub in a background thread; without the binary its terminal scanning
is skipped anyway, and ``read_file`` never uses it).
Its API server needs aiohttp, which only hermes-agent's ``messaging`` extra installs:
the pinned ``aiohttp`` is added to its venv on first use. A gateway is ready when
``GET /health`` is 200 and, where the body lists profiles (ours), each is ready. Both
sides get ``HTTP(S)_PROXY`` pointing at a per-side sink that records and refuses every
request meant for the internet (``NO_PROXY`` covers 127.0.0.1), so nothing leaves the
machine and any attempt is reported. Theirs also probes the fake for a local server
type (``/api/v1/models``, ``/api/tags``, ``/v1/props``, ``/props``, ``/version``, 404
here) on every request: part of its cost, counted in the table.

Measured, after two untimed warm-up requests per side: 40 requests at concurrency 1,
then at concurrency 8, each side sending half of them in the order ours, theirs,
theirs, ours: throughput over the successful responses and their p50/p95 latency.
Then RSS: ours starts again with ``--profiles p1,p2,p3`` (one server, the model id
picks the profile), theirs starts again with its one profile; each gets the same nine
requests (three per model for ours), then the gateway process's VmRSS is read (the
target) with its VmHWM, and the PSS of every process in its session is summed (ours
forks a CLI server per home beside the gateway, sharing its litellm). Exit status 0
even when a
target fails; 1 when a side cannot be set up (the message names the side).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import secrets
import selectors
import signal
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from cli_startup import DEFAULT_THEIRS_VENV, REPO, THEIRS_SPEC, add_common_arguments, ensure_theirs
from oneshot import ANSWER, OURS_KEY, TOKEN, clean_env, serve_fake

THEIRS_KEY = "sk-bench-theirs"
AIOHTTP_SPEC = "aiohttp==3.14.1"  # pinned by hermes-agent 0.19.0's `messaging` extra
PROFILES = ("p1", "p2", "p3")
RSS_REQUESTS_PER_PROFILE = 3
THROUGHPUT_TARGET, LATENCY_TARGET, RSS_TARGET = 5.0, 0.25, 1.2  # RSS: issue 26
MAX_CONCURRENCY = 16  # per-profile limit on both sides, above the benchmark's 8


class SetupError(Exception):
    """A side could not be started or did not answer its warm-up; the message names it."""


@dataclass
class Sample:
    tag: str
    status: int
    """HTTP status; 0 when the request itself failed (connection, timeout)."""
    latency_ms: float
    ok: bool
    detail: str = ""


@dataclass
class Run:
    """The requests of one side at one concurrency, and the wall time spent on them."""

    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def ok_ms(self) -> list[float]:
        return [s.latency_ms for s in self.samples if s.ok]

    def figures(self) -> dict[str, float | int | None]:
        ok = sorted(self.ok_ms)
        return {"requests": len(self.samples), "ok": len(ok),
                "throughput_rps": len(ok) / self.wall_s if self.wall_s else 0.0,
                "p50_ms": statistics.median(ok) if ok else None,
                "p95_ms": statistics.quantiles(ok, n=20, method="inclusive")[18]
                if len(ok) > 1 else (ok[0] if ok else None)}


class ProxySink(socketserver.ThreadingTCPServer):
    """Stands in for the internet: records the first line of every proxied request, refuses it."""

    daemon_threads = True

    def __init__(self) -> None:
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _SinkHandler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                         daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _SinkHandler(socketserver.StreamRequestHandler):
    timeout = 5
    server: ProxySink

    def handle(self) -> None:
        try:
            line = self.rfile.readline(4096).decode("latin-1").strip()
            self.server.seen.append(line or "<empty>")
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")
        except OSError:
            pass


@dataclass
class Server:
    """One gateway process: how to start it, where it listens, and the model ids it serves."""

    side: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    log: Path
    port: int
    key: str
    models: list[str]
    proc: subprocess.Popen[bytes] | None = None
    early_health: str = ""
    """A 200 ``/health`` answer seen before every profile was ready, if any."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def command(self) -> str:
        return f"HERMES_HOME={self.env['HERMES_HOME']} {' '.join(self.argv)}"

    def start(self, timeout: float, poll: float = 0.2) -> float:
        """Start the gateway and wait until ``GET /health`` is 200 (asked every ``poll`` s);
        return the seconds taken."""
        begin = time.perf_counter()
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd,
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        last = "no answer"
        while time.perf_counter() - begin < timeout:
            if self.proc.poll() is not None:
                raise SetupError(f"{self.side}: `{self.command}` exited {self.proc.returncode} "
                                 f"before /health answered\n{self.log_tail()}")
            try:
                health = httpx.get(f"{self.url}/health", timeout=2, trust_env=False)
                last = f"HTTP {health.status_code}: {health.text[:300]}"
                if health.status_code == 200:
                    if not (unready := self.unready(health)):
                        return time.perf_counter() - begin
                    self.early_health = self.early_health or f"{last} (not ready: {unready})"
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            time.sleep(poll)
        raise SetupError(f"{self.side}: `{self.command}`: GET {self.url}/health not 200 within "
                         f"{timeout:.0f}s (last: {last})\n{self.log_tail()}")

    def unready(self, health: httpx.Response) -> list[str]:
        """Models whose profile a 200 ``/health`` body does not report ready. Ours lists its
        profiles there (200 may come before they are: requests then get 401); theirs does not."""
        try:
            profiles = health.json().get("profiles")
        except (ValueError, AttributeError):
            return []
        if not isinstance(profiles, dict):
            return []
        return [m for m in self.models if not (profiles.get(m) or {}).get("ready")]

    def stop(self) -> None:
        """SIGTERM the gateway's process group; SIGKILL it if still there after 20 s."""
        if self.proc is None:
            return
        if self.proc.poll() is not None:  # the gateway is gone; leave no child behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            return
        for signum, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, signum)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                print(f"[bench] {self.side}: gateway still running {grace}s after "
                      f"{signum.name}", file=sys.stderr)

    def log_tail(self, lines: int = 25) -> str:
        text = self.log.read_text(errors="replace").splitlines()[-lines:]
        return f"--- last lines of {self.log} ---\n" + "\n".join(text)

    def memory(self) -> dict[str, int]:
        """The gateway process's own VmRSS/VmHWM, and the PSS (shared pages divided among
        their users) summed over every process of its session (KiB): ours forks a CLI
        server per home beside the gateway (the warm runtime), which shares the gateway's
        litellm copy-on-write, so summing their RSS would count those pages twice."""
        assert self.proc is not None
        own = _status(Path(f"/proc/{self.proc.pid}"))
        tree, count = 0, 0
        for proc_dir in Path("/proc").iterdir():  # zombies (no memory) are not counted
            if proc_dir.name.isdigit() and _session_of(proc_dir) == self.proc.pid \
                    and (pss := _pss(proc_dir)):
                tree += pss
                count += 1
        return {"rss_kib": own.get("VmRSS", 0), "hwm_kib": own.get("VmHWM", 0),
                "session_pss_kib": tree, "processes": count}


def _session_of(proc_dir: Path) -> int | None:
    try:  # fields after "(comm)": state ppid pgrp session ...
        return int((proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def _pss(proc_dir: Path) -> int:
    try:
        for line in (proc_dir / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _status(proc_dir: Path) -> dict[str, int]:
    try:
        lines = (proc_dir / "status").read_text().splitlines()
    except OSError:
        return {}
    return {k: int(v.split()[0]) for k, _, v in (ln.partition(":") for ln in lines)
            if k in ("VmRSS", "VmHWM")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def offline_env(root: Path, sink: ProxySink) -> dict[str, str]:
    """``oneshot.clean_env`` without proxy settings, then every proxy pointing at ``sink``."""
    env = {k: v for k, v in clean_env(root).items() if not k.lower().endswith("_proxy")}
    for name in ("http_proxy", "https_proxy"):
        env[name] = env[name.upper()] = sink.url
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def ours_server(exe: Path, root: Path, fake_url: str, key: str, sink: ProxySink,
                profiles: tuple[str, ...] = ()) -> Server:
    """Ours on a free port: the default profile, or ``profiles`` served by one process."""
    env, port = offline_env(root, sink), free_port()
    home = Path(env["HERMES_HOME"])
    for profile_home in [home / "profiles" / p for p in profiles] or [home]:
        profile_home.mkdir(parents=True, mode=0o700, exist_ok=True)
        (profile_home / "config.yaml").write_text(
            "defaults:\n  - override provider: custom\n  - override platforms: api_server\n"
            f"provider: {{model: gpt-4o, api_base: {fake_url}, timeout: 30, max_retries: 0}}\n"
            "platforms:\n  enabled:\n    api_server:\n"
            f"      settings: {{port: {port}, max_concurrency: {MAX_CONCURRENCY}}}\n")
        (profile_home / ".env").write_text(f"CUSTOM_API_KEY={OURS_KEY}\nAPI_SERVER_KEY={key}\n")
        (profile_home / ".env").chmod(0o600)
    argv = [str(exe), "gateway", "run"] + (["--profiles", ",".join(profiles)] if profiles else [])
    return Server("ours", argv, env, root.parent / "work", root / "gateway.log", port, key,
                  list(profiles) or ["default"])


def theirs_server(exe: Path, root: Path, fake_url: str, key: str, sink: ProxySink) -> Server:
    env, port = offline_env(root, sink), free_port()
    (Path(env["HERMES_HOME"]) / "config.yaml").write_text(
        f"model:\n  default: bench-theirs\n  provider: custom\n  base_url: {fake_url}\n"
        f"  api_key: {THEIRS_KEY}\n  context_length: 128000\n"
        "security:\n  allow_lazy_installs: false\n  tirith_enabled: false\n"
        f"gateway:\n  api_server:\n    max_concurrent_runs: {MAX_CONCURRENCY}\n")
    env |= {"API_SERVER_ENABLED": "true", "API_SERVER_KEY": key,
            "API_SERVER_HOST": "127.0.0.1", "API_SERVER_PORT": str(port)}
    # Its /v1/chat/completions accepts any model id; "hermes-agent" is what /v1/models lists.
    return Server("theirs", [str(exe), "gateway", "run"], env, root.parent / "work",
                  root / "gateway.log", port, key, ["hermes-agent"])


def ensure_theirs_api_server(exe: Path) -> None:
    """hermes-agent's API server imports aiohttp, which its base install lacks."""
    python = exe.parent / "python"
    if subprocess.run([str(python), "-c", "import aiohttp"], capture_output=True).returncode:
        print(f"[bench] installing {AIOHTTP_SPEC} into {exe.parent.parent} ...", file=sys.stderr)
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", AIOHTTP_SPEC]
        if subprocess.run(pip, stdout=sys.stderr).returncode:
            raise SetupError(f"theirs: could not install {AIOHTTP_SPEC} into {exe.parent.parent}")


def ours_has_gateway(exe: Path) -> bool:
    with tempfile.TemporaryDirectory(prefix="hermes-probe-") as tmp:
        probe = subprocess.run([str(exe), "gateway", "run", "--help"], capture_output=True,
                               env=clean_env(Path(tmp)), timeout=120)
    return probe.returncode == 0


class Client:
    """Sends tagged chat completions to one server (Nagle off, like the fake's side)."""

    def __init__(self, server: Server, notes: Path, timeout: float):
        self.server, self.notes = server, notes
        transport = httpx.HTTPTransport(
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=32))
        self.http = httpx.Client(transport=transport, timeout=timeout, trust_env=False,
                                 headers={"Authorization": f"Bearer {server.key}"})

    def chat(self, tag: str, model: str | None = None) -> Sample:
        prompt = f"Read {self.notes} and tell me what it says. [bench run {tag}]"
        body = {"model": model or self.server.models[0],
                "messages": [{"role": "user", "content": prompt}]}
        begin = time.perf_counter()
        try:
            response = self.http.post(f"{self.server.url}/v1/chat/completions", json=body)
        except httpx.HTTPError as exc:
            ms = (time.perf_counter() - begin) * 1000
            return Sample(tag, 0, ms, False, f"{type(exc).__name__}: {exc}")
        ms = (time.perf_counter() - begin) * 1000
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, LookupError, TypeError):
            content = None
        if response.status_code == 200 and content == ANSWER:
            return Sample(tag, 200, ms, True)
        return Sample(tag, response.status_code, ms, False,
                      f"HTTP {response.status_code}: {response.text[:300]}")

    def block(self, tags: list[str], concurrency: int, run: Run) -> None:
        """Send ``tags``, ``concurrency`` at a time; add the samples and wall time to ``run``."""
        begin = time.perf_counter()
        if concurrency == 1:
            samples = [self.chat(tag) for tag in tags]
        else:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                samples = list(pool.map(self.chat, tags))
        run.wall_s += time.perf_counter() - begin
        run.samples += samples

    def warm_up(self, count: int = 2) -> None:
        for i in range(count):
            sample = self.chat(f"{self.server.side}-warm-{i}")
            if not sample.ok:
                raise SetupError(f"{self.server.side}: warm-up request failed: POST "
                                 f"{self.server.url}/v1/chat/completions (model "
                                 f"{self.server.models[0]!r}) -> {sample.detail}\n"
                                 f"{self.server.log_tail()}")


def measure_load(clients: list[Client], requests: int) -> dict[str, dict[int, Run]]:
    """At concurrency 1, then 8: each side sends half its requests, in the order A B B A.

    Blocks rather than alternating single requests, so that at concurrency 1 each
    request follows its side's previous one at once, as from a client in a loop: a pause
    between two requests changes TCP's delayed-ACK behaviour, and with it the latency of
    a server that leaves Nagle's algorithm on (measured: 17 ms after a pause, 57 ms back
    to back).
    """
    runs = {c.server.side: {1: Run(), 8: Run()} for c in clients}
    halves = [range(requests // 2), range(requests // 2, requests)]
    for concurrency in (1, 8):
        print(f"[bench] concurrency {concurrency}: {requests} requests per side ...",
              file=sys.stderr)
        for half, order in zip(halves, (clients, clients[::-1]), strict=True):
            for client in order:
                side = client.server.side
                client.block([f"{side}-c{concurrency}-{i}" for i in half], concurrency,
                              runs[side][concurrency])
    return runs


def measure_rss(server: Server, notes: Path, timeout: float,
                start_timeout: float) -> tuple[dict[str, int], Run]:
    """Start ``server``, send three requests per model (nine to a single model), read memory."""
    print(f"[bench] {server.side}: RSS start with model(s) {server.models} ...", file=sys.stderr)
    server.start(start_timeout)
    client, run = Client(server, notes, timeout), Run()
    count = RSS_REQUESTS_PER_PROFILE * len(PROFILES)
    models = [server.models[i % len(server.models)] for i in range(count)]
    for i, model in enumerate(models):
        begin = time.perf_counter()
        run.samples.append(client.chat(f"{server.side}-rss-{model}-{i}", model))
        run.wall_s += time.perf_counter() - begin
    client.http.close()
    time.sleep(1)  # let the last turn's after-work (persisting, reviews) settle
    memory = server.memory()
    server.stop()
    return memory, run


def start_fake(notes: Path, timeout: float = 60) -> tuple[subprocess.Popen[str], str]:
    fake = subprocess.Popen([sys.executable, __file__, "--serve-fake", str(notes)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert fake.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(fake.stdout, selectors.EVENT_READ)
        line = fake.stdout.readline() if sel.select(timeout) else ""
    if not line.strip().isdigit():
        fake.kill()
        raise SetupError(f"fake LLM: no port printed within {timeout:.0f}s ({line!r})")
    return fake, f"http://127.0.0.1:{int(line)}/v1"


def stop_fake(fake: subprocess.Popen[str]) -> dict[str, Any]:
    fake.send_signal(signal.SIGTERM)
    try:
        output, _ = fake.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(fake.pid, signal.SIGKILL)
        fake.communicate()
        return {"error": "fake LLM did not stop within 30 s"}
    try:
        return dict(json.loads(output.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": f"fake LLM printed no summary: {output[-300:]!r}"}


def calls_per_request(fake: dict[str, Any], side: str) -> dict[str, int]:
    """How many model calls each of ``side``'s requests made (histogram: calls -> requests)."""
    counts = Counter(n for tag, n in fake.get("chats", {}).items() if tag.startswith(side + "-"))
    return {str(calls): requests for calls, requests in sorted(counts.items())}


def fmt(value: float | int | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def report(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Print the table, failures and targets; return the checks for the JSON output."""
    sides = list(result["load"])
    print(f"\n| {'measure':<36} |" + "".join(f" {s:>9} |" for s in sides))
    print(f"|{'-' * 38}|" + "".join(f"{'-' * 10}:|" for _ in sides))

    def row(name: str, values: list[str]) -> None:
        print(f"| {name:<36} |" + "".join(f" {v:>9} |" for v in values))

    for c in (1, 8):
        figs = [result["load"][s][str(c)] for s in sides]
        row(f"c={c} ok / requests", [f"{f['ok']}/{f['requests']}" for f in figs])
        row(f"c={c} throughput req/s", [fmt(f["throughput_rps"], ".2f") for f in figs])
        row(f"c={c} p50 latency ms", [fmt(f["p50_ms"]) for f in figs])
        row(f"c={c} p95 latency ms", [fmt(f["p95_ms"]) for f in figs])
    row("gateway RSS after the load, 1 profile MiB",
        [fmt(result["load_memory"][s]["rss_kib"] / 1024) for s in sides])
    rss = result["rss"]
    row("gateway RSS: ours 3 profiles, theirs 1",
        [fmt(rss[s]["memory"]["rss_kib"] / 1024) if s in rss else "-" for s in sides])
    row("  gateway VmHWM MiB",
        [fmt(rss[s]["memory"]["hwm_kib"] / 1024) if s in rss else "-" for s in sides])
    row("  PSS of all its processes MiB",
        [fmt(rss[s]["memory"]["session_pss_kib"] / 1024) if s in rss else "-" for s in sides])
    row("  processes",
        [str(rss[s]["memory"]["processes"]) if s in rss else "-" for s in sides])
    row("  RSS-phase requests ok",
        [f"{rss[s]['ok']}/{rss[s]['requests']}" if s in rss else "-" for s in sides])
    row("start-up to /health 200, s", [fmt(result["startup_s"][s], ".2f") for s in sides])
    fake = result["fake"]
    row("model calls per request {calls: n}",
        [json.dumps(calls_per_request(fake, s)).replace(" ", "") for s in sides])
    keys = {"ours": OURS_KEY, "theirs": THEIRS_KEY}
    row("other requests to the fake (404)",
        [str(fake.get("probes", {}).get(keys[s], 0)) for s in sides])
    row("internet requests (proxy sink)", [str(len(result["internet"][s])) for s in sides])
    print()
    for side in sides:
        for line in result["failures"][side][:5] + result["rss"][side]["failures"][:5]:
            print(f"{side} failure: {line}")
        for line in sorted(set(result["internet"][side]))[:5]:
            print(f"{side} tried the internet: {line}")
    for line in result["early_health"]:
        print(f"early /health 200 (waited for every profile to be ready): {line}")
    odd = {k: v for k, v in fake.items() if k not in ("chats", "probes") and v}
    if fake.get("chats", {}).get("untagged") or odd or fake.get("probes", {}).get("none"):
        print(f"fake LLM: untagged chats {fake.get('chats', {}).get('untagged', 0)}, "
              f"unauthenticated probes {fake.get('probes', {}).get('none', 0)}, {odd}")
    return checks(result) if sides == ["ours", "theirs"] else []


def checks(result: dict[str, Any]) -> list[dict[str, Any]]:
    load = result["load"]
    ours8, theirs8 = load["ours"]["8"]["throughput_rps"], load["theirs"]["8"]["throughput_rps"]
    ours1, theirs1 = load["ours"]["1"]["p50_ms"], load["theirs"]["1"]["p50_ms"]
    rss = {side: r["memory"]["rss_kib"] for side, r in result["rss"].items()}
    rss_ratio = rss["ours"] / rss["theirs"] if len(rss) == 2 else None
    out = [("throughput c=8 ours / theirs", ours8 / theirs8 if theirs8 else None, ">=",
            THROUGHPUT_TARGET),
           ("p50 latency c=1 ours / theirs", ours1 / theirs1 if ours1 and theirs1 else None, "<=",
            LATENCY_TARGET),
           ("gateway RSS ours 3 profiles / theirs 1 profile", rss_ratio, "<=", RSS_TARGET)]
    verdicts = []
    for name, value, op, target in out:
        passed = value is not None and (value >= target if op == ">=" else value <= target)
        print(f"{'PASS' if passed else 'FAIL'}  {name} = {fmt(value, '.2f')}  "
              f"(target {op} {target:.2f})")
        verdicts.append({"name": name, "value": value, "target": f"{op} {target}",
                         "pass": passed})
    return verdicts


def run_benchmark(args: argparse.Namespace, sides: list[str], theirs_exe: Path | None,
                  tmp: Path) -> dict[str, Any]:
    """Everything that starts processes; each is stopped before this returns or raises."""
    (tmp / "work").mkdir()
    notes = tmp / "work" / "notes.txt"
    notes.write_text(f"A small file for the API load benchmark.\nThe token is {TOKEN}.\n")
    key = "bench-" + secrets.token_hex(13)  # 32 characters: both sides refuse < 16
    sinks = {side: ProxySink() for side in sides}
    servers: list[Server] = []
    result: dict[str, Any] = {"startup_s": {}, "load_memory": {}, "rss": {}}
    fake, fake_url = start_fake(notes)

    def server(side: str, root: Path, profiles: tuple[str, ...] = ()) -> Server:
        """A new gateway of ``side`` (not started yet), on the list that ``finally`` stops."""
        if side == "ours":
            made = ours_server(args.ours, root, fake_url, key, sinks[side], profiles)
        else:
            assert theirs_exe is not None
            made = theirs_server(theirs_exe, root, fake_url, key, sinks[side])
        servers.append(made)
        return made

    try:
        for side in sides:
            print(f"[bench] {side}: starting `{server(side, tmp / side).command}` ...",
                  file=sys.stderr)
            result["startup_s"][side] = servers[-1].start(args.start_timeout)
        clients = [Client(s, notes, args.timeout) for s in servers]
        for client in clients:
            client.warm_up()
        runs = measure_load(clients, args.requests)
        for client in clients:
            client.http.close()
            result["load_memory"][client.server.side] = client.server.memory()
            client.server.stop()
        for side in sides:
            rss_server = server(side, tmp / f"{side}-rss", PROFILES if side == "ours" else ())
            memory, run = measure_rss(rss_server, notes, args.timeout, args.start_timeout)
            result["rss"][side] = {"memory": memory, **run.figures(),
                                   "failures": [s.detail for s in run.samples if not s.ok]}
    finally:
        for each in servers:
            each.stop()
        result["fake"] = stop_fake(fake)
        for sink in sinks.values():
            sink.shutdown()
            sink.server_close()
    result["internet"] = {side: sink.seen for side, sink in sinks.items()}
    result["commands"] = [s.command for s in servers]
    result["early_health"] = [f"{s.side}: `{s.command}`: {s.early_health}"
                              for s in servers if s.early_health]
    return result | summarize(runs)


def summarize(runs: dict[str, dict[int, Run]]) -> dict[str, Any]:
    """Figures, raw samples and failures of the load runs, keyed by side and concurrency."""
    return {"load": {side: {str(c): run.figures() for c, run in by_c.items()}
                     for side, by_c in runs.items()},
            "samples": {side: {str(c): [asdict(s) for s in run.samples]
                               for c, run in by_c.items()} for side, by_c in runs.items()},
            "failures": {side: [f"c={c} {s.tag}: {s.detail}" for c, run in by_c.items()
                                for s in run.samples if not s.ok]
                         for side, by_c in runs.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=f"Chat-completion throughput, latency and gateway RSS of hermes-runtime's "
                    f"API server vs {THEIRS_SPEC}'s, against one fake LLM.",
        epilog=f"Targets: throughput at concurrency 8 ours/theirs >= {THROUGHPUT_TARGET}; p50 "
               f"latency at concurrency 1 ours/theirs <= {LATENCY_TARGET}; RSS of ours serving "
               f"three profiles / theirs serving one <= {RSS_TARGET}. Exits 0 after measuring, "
               "even when a target fails (FAIL lines); 1 when a side cannot be set up.")
    ap.add_argument("--requests", type=int, default=40,
                    help="requests per side at each concurrency (default: 40)")
    add_common_arguments(ap)
    ap.add_argument("--only", choices=("ours", "theirs"), help="measure one side, no ratios")
    ap.add_argument("--timeout", type=float, default=120, help="per request, s (default: 120)")
    ap.add_argument("--start-timeout", type=float, default=180,
                    help="for a gateway's /health to answer 200, s (default: 180)")
    ap.add_argument("--serve-fake", type=Path, help=argparse.SUPPRESS)  # the fake's process
    args = ap.parse_args()
    if args.serve_fake:
        return serve_fake(args.serve_fake)
    return measure_and_report(ap, args, run_benchmark, report, label="api-load",
                              unit="requests")


def measure_and_report(ap: argparse.ArgumentParser, args: argparse.Namespace,
                       run: Callable[..., dict[str, Any]],
                       report: Callable[[dict[str, Any]], Any], *, label: str,
                       unit: str) -> int:
    """What a gateway load bench does once its options are parsed (this one and
    ``webhook_load.py``): set up the sides, ``run(args, sides, theirs_exe, tmp)``,
    ``report`` the result's checks and write ``--json``."""
    if args.requests < 2:
        ap.error("--requests must be >= 2")
    sides = [args.only] if args.only else ["ours", "theirs"]
    try:
        theirs_exe = None
        if "theirs" in sides:
            theirs_exe = args.theirs or ensure_theirs(DEFAULT_THEIRS_VENV)
            ensure_theirs_api_server(theirs_exe)  # the webhook platform needs aiohttp too
        if "ours" in sides and not (os.access(args.ours, os.X_OK) and ours_has_gateway(args.ours)):
            raise SetupError(f"ours: `{args.ours} gateway run --help` fails (run `uv sync "
                             "--frozen --group test`)")
        with tempfile.TemporaryDirectory(prefix=f"hermes-{label}-") as tmp:
            result = run(args, sides, theirs_exe, Path(tmp))
    except SetupError as exc:
        print(f"[bench] ABORT: {exc}", file=sys.stderr)
        return 1
    print(f"\n{args.requests} {unit} per side and concurrency; "
          f"nproc={len(os.sched_getaffinity(0))}; python {platform.python_version()}; "
          f"ours={args.ours}; theirs={theirs_exe}")
    result["checks"] = report(result)
    if args.json:
        result |= {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "requests": args.requests,
                   "nproc": len(os.sched_getaffinity(0)), "python": platform.python_version()}
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"\nraw figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
