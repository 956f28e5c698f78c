"""Side-by-side webhook load benchmark: ``hermes gateway run`` with our ``webhook`` platform
(ours) vs hermes-agent 0.19.0's gateway with its webhook platform (theirs).

Run from the repository root:

    .venv/bin/python bench/webhook_load.py                   # 40 deliveries per concurrency
    .venv/bin/python bench/webhook_load.py --requests 80 --json /tmp/webhook_load.json
    .venv/bin/python bench/webhook_load.py --only ours       # one side, no ratios

Both sides get the same route: GitHub-signed deliveries (``X-Hub-Signature-256`` over the
raw body, ``X-GitHub-Delivery``) whose JSON fills ``Read {path} and tell me what it says.
[bench run {tag}]``, in front of one fake LLM (``tests.fakellm`` in a subprocess, as in
``api_load.py``) that asks for one ``read_file`` of a small file and then answers. Both
routes may use the file tools (ours: the route's ``toolsets: [file]``; theirs:
``platform_toolsets.webhook: [file]``, its webhook default has none) and theirs' rate
limit is raised (30 a minute by default).

A delivery counts when its answer is the fixed answer. Ours answers in the response
(``deliver: response``): latency is the request's round trip. Theirs always answers 202
at once and runs the agent in the background (``deliver: log``): latency is from sending
the request to the time stamp of its gateway log's ``Response for webhook:bench:<tag>``
line (millisecond resolution), so each of its workers waits for that line before
sending the next delivery, like ours waits for its response. Everything else (proxy
sink, fake LLM, warm-up, the A B B A blocks at concurrency 1 then 8) is ``api_load``'s.

Targets: throughput at concurrency 8 ours/theirs >= 5; p50 latency at concurrency 1
ours/theirs <= 0.25. Exit status 0 even when a target fails; 1 when a side cannot be
set up (the message names the side).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from api_load import (
    Client,
    ProxySink,
    Sample,
    Server,
    SetupError,
    calls_per_request,
    fmt,
    free_port,
    measure_and_report,
    measure_load,
    offline_env,
    start_fake,
    stop_fake,
    summarize,
)
from cli_startup import THEIRS_SPEC, add_common_arguments
from oneshot import ANSWER, OURS_KEY, TOKEN

THEIRS_KEY = "sk-bench-theirs"
ROUTE = "bench"
PROMPT = "Read {path} and tell me what it says. [bench run {tag}]"
THROUGHPUT_TARGET, LATENCY_TARGET = 5.0, 0.25
LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*\[webhook\] Response for "
                      rf"webhook:{ROUTE}:([\w-]+): (.*)$")


def ours_server(exe: Path, root: Path, fake_url: str, secret: str, sink: ProxySink) -> Server:
    env, port = offline_env(root, sink), free_port()
    home = Path(env["HERMES_HOME"])
    route = {"secret": "${secret:BENCH_WEBHOOK_SECRET}", "signature": "github",
             "prompt": PROMPT, "toolsets": ["file"]}
    config = {"defaults": [{"override provider": "custom"}],
              "provider": {"model": "gpt-4o", "api_base": fake_url, "timeout": 30,
                           "max_retries": 0},
              "platforms": {"enabled": {"webhook": {"kind": "webhook", "settings": {
                  "port": port, "routes": {ROUTE: route}}}}}}
    (home / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    (home / ".env").write_text(f"CUSTOM_API_KEY={OURS_KEY}\nBENCH_WEBHOOK_SECRET={secret}\n")
    (home / ".env").chmod(0o600)
    return Server("ours", [str(exe), "gateway", "run"], env, root.parent / "work",
                  root / "gateway.log", port, "", [])


def theirs_server(exe: Path, root: Path, fake_url: str, secret: str, sink: ProxySink) -> Server:
    env, port = offline_env(root, sink), free_port()
    config = {"model": {"default": "bench-theirs", "provider": "custom", "base_url": fake_url,
                        "api_key": THEIRS_KEY, "context_length": 128000},
              "security": {"allow_lazy_installs": False, "tirith_enabled": False},
              "platform_toolsets": {"webhook": ["file"]},
              "platforms": {"webhook": {"enabled": True, "extra": {
                  "host": "127.0.0.1", "port": port, "rate_limit": 1_000_000,
                  "routes": {ROUTE: {"secret": secret, "prompt": PROMPT, "deliver": "log"}}}}}}
    (Path(env["HERMES_HOME"]) / "config.yaml").write_text(json.dumps(config))
    return Server("theirs", [str(exe), "gateway", "run"], env, root.parent / "work",
                  root / "gateway.log", port, "", [])


class LogWatch(threading.Thread):
    """Follows theirs' gateway log: the time and text of each delivery's answer, by tag."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.path = path
        self.answers: dict[str, list[tuple[float, str]]] = {}
        self.changed = threading.Condition()
        self.stopped = False

    def run(self) -> None:
        while not self.path.exists() and not self.stopped:
            time.sleep(0.05)
        with self.path.open(encoding="utf-8", errors="replace") as log:
            while not self.stopped:
                line = log.readline()
                if not line:
                    time.sleep(0.002)
                    continue
                if match := LOG_LINE.match(line.rstrip("\n")):
                    stamp = time.mktime(time.strptime(match[1], "%Y-%m-%d %H:%M:%S"))
                    with self.changed:
                        self.answers.setdefault(match[3], []).append(
                            (stamp + int(match[2]) / 1000, match[4]))
                        self.changed.notify_all()

    def wait(self, tag: str, timeout: float) -> tuple[float, str] | None:
        """The time and text of ``tag``'s answer (interim lines skipped), or None."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while (found := self._answer(tag)) is None and time.monotonic() < deadline:
                self.changed.wait(deadline - time.monotonic())
        return found

    def _answer(self, tag: str) -> tuple[float, str] | None:
        return next(((t, text) for t, text in self.answers.get(tag, [])
                     if ANSWER in text or text.startswith("bench:")), None)


class Deliverer(Client):
    """Sends signed deliveries to one side: ``api_load``'s client (its blocks and
    ``measure_load``), each request a delivery."""

    def __init__(self, server: Server, notes: Path, secret: str, timeout: float,
                 watch: LogWatch | None):
        super().__init__(server, notes, timeout)
        del self.http.headers["authorization"]  # a webhook is signed instead
        self.secret, self.timeout, self.watch = secret, timeout, watch

    def chat(self, tag: str, model: str | None = None) -> Sample:
        return self.deliver(tag)

    def deliver(self, tag: str) -> Sample:
        body = json.dumps({"path": str(self.notes), "tag": tag}).encode()
        signature = "sha256=" + hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {"content-type": "application/json", "x-hub-signature-256": signature,
                   "x-github-delivery": tag, "x-github-event": "push"}
        sent, begin = time.time(), time.perf_counter()
        try:
            response = self.http.post(f"{self.server.url}/webhooks/{ROUTE}", content=body,
                                      headers=headers)
        except httpx.HTTPError as exc:
            return Sample(tag, 0, (time.perf_counter() - begin) * 1000, False,
                          f"{type(exc).__name__}: {exc}")
        if self.watch is None:
            return _ours(tag, response, (time.perf_counter() - begin) * 1000)
        return self._theirs(tag, response, sent)

    def _theirs(self, tag: str, response: httpx.Response, sent: float) -> Sample:
        assert self.watch is not None
        if response.status_code != 202:
            return Sample(tag, response.status_code, 0.0, False,
                          f"HTTP {response.status_code}: {response.text[:300]}")
        found = self.watch.wait(tag, self.timeout)
        if found is None:
            return Sample(tag, 202, self.timeout * 1000, False,
                          f"no answer in its log within {self.timeout:.0f} s: "
                          f"{self.watch.answers.get(tag, [])[:2]}")
        at, text = found
        return Sample(tag, 202, (at - sent) * 1000, ANSWER in text, "" if ANSWER in text
                      else text[:300])

    def warm_up(self, count: int = 2) -> None:
        for i in range(count):
            sample = self.deliver(f"{self.server.side}-warm-{i}")
            if not sample.ok:
                raise SetupError(f"{self.server.side}: warm-up delivery failed: "
                                 f"{sample.detail}\n{self.server.log_tail()}")


def _ours(tag: str, response: httpx.Response, ms: float) -> Sample:
    try:
        answer = response.json().get("answer")
    except (ValueError, AttributeError):
        answer = None
    if response.status_code == 200 and answer == ANSWER:
        return Sample(tag, 200, ms, True)
    return Sample(tag, response.status_code, ms, False,
                  f"HTTP {response.status_code}: {response.text[:300]}")


def report(result: dict[str, Any]) -> list[dict[str, Any]]:
    sides = list(result["load"])
    print(f"\n| {'measure':<36} |" + "".join(f" {s:>9} |" for s in sides))
    print(f"|{'-' * 38}|" + "".join(f"{'-' * 10}:|" for _ in sides))

    def row(name: str, values: list[str]) -> None:
        print(f"| {name:<36} |" + "".join(f" {v:>9} |" for v in values))

    for c in (1, 8):
        figs = [result["load"][s][str(c)] for s in sides]
        row(f"c={c} ok / deliveries", [f"{f['ok']}/{f['requests']}" for f in figs])
        row(f"c={c} throughput deliveries/s", [fmt(f["throughput_rps"], ".2f") for f in figs])
        row(f"c={c} p50 latency ms", [fmt(f["p50_ms"]) for f in figs])
        row(f"c={c} p95 latency ms", [fmt(f["p95_ms"]) for f in figs])
    row("start-up to /health 200, s", [fmt(result["startup_s"][s], ".2f") for s in sides])
    row("model calls per delivery {calls: n}",
        [json.dumps(calls_per_request(result["fake"], s)).replace(" ", "") for s in sides])
    row("internet requests (proxy sink)", [str(len(result["internet"][s])) for s in sides])
    print()
    for side in sides:
        for line in result["failures"][side][:5]:
            print(f"{side} failure: {line}")
    return checks(result) if sides == ["ours", "theirs"] else []


def checks(result: dict[str, Any]) -> list[dict[str, Any]]:
    load = result["load"]
    ours8, theirs8 = load["ours"]["8"]["throughput_rps"], load["theirs"]["8"]["throughput_rps"]
    ours1, theirs1 = load["ours"]["1"]["p50_ms"], load["theirs"]["1"]["p50_ms"]
    verdicts = []
    for name, value, op, target in (
            ("throughput c=8 ours / theirs", ours8 / theirs8 if theirs8 else None, ">=",
             THROUGHPUT_TARGET),
            ("p50 latency c=1 ours / theirs", ours1 / theirs1 if ours1 and theirs1 else None,
             "<=", LATENCY_TARGET)):
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
    notes.write_text(f"A small file for the webhook load benchmark.\nThe token is {TOKEN}.\n")
    secret = "bench-" + secrets.token_hex(16)
    sinks = {side: ProxySink() for side in sides}
    makers: dict[str, Callable[..., Server]] = {
        "ours": lambda root: ours_server(args.ours, root, fake_url, secret, sinks["ours"]),
        "theirs": lambda root: theirs_server(theirs_exe, root, fake_url, secret,  # type: ignore[arg-type]
                                             sinks["theirs"])}
    servers: list[Server] = []
    watches: list[LogWatch] = []
    result: dict[str, Any] = {"startup_s": {}}
    fake, fake_url = start_fake(notes)
    try:
        for side in sides:
            servers.append(makers[side](tmp / side))
            print(f"[bench] {side}: starting `{servers[-1].command}` ...", file=sys.stderr)
            result["startup_s"][side] = servers[-1].start(args.start_timeout)
        deliverers = []
        for server in servers:
            watch = None
            if server.side == "theirs":
                watch = LogWatch(Path(server.env["HERMES_HOME"]) / "logs" / "gateway.log")
                watch.start()
                watches.append(watch)
            deliverers.append(Deliverer(server, notes, secret, args.timeout, watch))
        for deliverer in deliverers:
            deliverer.warm_up()
        runs = measure_load(deliverers, args.requests)
    finally:
        for watch in watches:
            watch.stopped = True
        for each in servers:
            each.stop()
        result["fake"] = stop_fake(fake)
        for sink in sinks.values():
            sink.shutdown()
            sink.server_close()
    result["internet"] = {side: sink.seen for side, sink in sinks.items()}
    result["commands"] = [s.command for s in servers]
    return result | summarize(runs)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=f"Signed webhook deliveries: throughput and latency of hermes-runtime's "
                    f"webhook platform vs {THEIRS_SPEC}'s, against one fake LLM.",
        epilog=f"Targets: throughput at concurrency 8 ours/theirs >= {THROUGHPUT_TARGET}; p50 "
               f"latency at concurrency 1 ours/theirs <= {LATENCY_TARGET}. Exits 0 after "
               "measuring, even when a target fails (FAIL lines); 1 when a side cannot be "
               "set up.")
    ap.add_argument("--requests", type=int, default=40,
                    help="deliveries per side at each concurrency (default: 40)")
    add_common_arguments(ap)
    ap.add_argument("--only", choices=("ours", "theirs"), help="measure one side, no ratios")
    ap.add_argument("--timeout", type=float, default=120, help="per delivery, s (default: 120)")
    ap.add_argument("--start-timeout", type=float, default=180,
                    help="for a gateway's /health to answer 200, s (default: 180)")
    args = ap.parse_args()
    return measure_and_report(ap, args, run_benchmark, report, label="webhook-load",
                              unit="deliveries")


if __name__ == "__main__":
    sys.exit(main())
