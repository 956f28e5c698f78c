"""Cost of an MCP tool call through the agent's dispatch, against the same tool in-process.

Run from the repository root:

    .venv/bin/python bench/mcp.py                  # 200 calls per side
    .venv/bin/python bench/mcp.py --calls 50 --json /tmp/mcp.json

A temporary profile's runtime gets the sample MCP server of the tests
(``tests/mcp_sample_server.py``, written with the official SDK) over stdio in its
``mcp_servers``; the server is started once and kept warm. Every call goes through
``Agent.dispatch`` (hooks, argument validation, redaction, the result's cap), with
``{"text": "ping"}``:

- ``in-process``: ``bench_echo``, a tool registered in the same registry whose handler
  calls the sample server's ``echo`` function directly;
- ``mcp``: ``mcp_sample_echo``, the same function behind the runtime's MCP client (its
  event-loop thread, the SDK, the stdio pipes, the server's own SDK);
- ``broker``: ``mcp_brokered_echo``, the same again through the warm server's broker (a
  Unix socket to the process that holds the server), as a command the warm server runs
  calls it.

The sides take turns within every round (the order rotates), so machine noise lands on
all alike; 20 untimed rounds first. Reported: median wall time of one dispatch, its 10th
and 90th percentiles, and the overhead: the median of the per-round differences to
``in-process``. Target (issue 21): ``mcp`` median overhead ≤ 5 ms. Exit status 0 even
if it is missed: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# This file is named mcp.py: its directory on the path would shadow the mcp SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]
sys.path.insert(0, str(REPO / "runtime"))
sys.path.insert(0, str(REPO / "tests"))

from hermes.agent.factory import Interaction  # noqa: E402
from hermes.config import compose_config  # noqa: E402
from hermes.container import build_runtime  # noqa: E402
from hermes.home import home_from_path  # noqa: E402
from hermes.mcp.broker import BrokerClient  # noqa: E402
from hermes.mcp.spec import server_specs  # noqa: E402
from hermes.mcp.tools import server_toolsets  # noqa: E402
from hermes.tools.base import ToolSpec, object_schema  # noqa: E402
from hermes.tools.toolsets import ToolsetSpec  # noqa: E402

SAMPLE = REPO / "tests" / "mcp_sample_server.py"
SIDES = {"in-process": "bench_echo", "mcp": "mcp_sample_echo", "broker": "mcp_brokered_echo"}
TARGET_MS = 5.0
WARM_UP = 20


def make_home(base: Path) -> tuple[Any, dict[str, str]]:
    root = base / "user" / ".hermes"
    root.mkdir(parents=True)
    server = {"command": sys.executable, "args": [str(SAMPLE)]}
    (root / "config.yaml").write_text(json.dumps({
        "defaults": [{"override provider": "custom"}],
        "provider": {"model": "bench", "api_base": "http://127.0.0.1:9/v1"},
        "mcp_servers": {"sample": server}}))
    (root / ".env").write_text("CUSTOM_API_KEY=sk-bench-0123456789\n")
    environ = {"HOME": str(base / "user"), "PATH": os.environ.get("PATH", ""),
               "LANG": "C.UTF-8", "HERMES_NO_DAEMON": "1"}
    return home_from_path(root).ensure(), environ


def in_process_echo() -> ToolSpec:
    """``echo`` of the sample server, called directly, answered as a tool result."""
    from mcp_sample_server import echo

    def handler(args: dict[str, Any], **_: Any) -> str:
        return json.dumps({"content": echo(args["text"])})

    return ToolSpec("bench_echo", "bench", "Say the text back.",
                    object_schema(("text",), text={"type": "string"}), handler)


def add_brokered(runtime: Any, home: Any, environ: dict[str, str]) -> Any:
    """The ``brokered`` server's tools through a broker beside this process (standing in
    for the warm server: the broker serves while ``run/daemon.pid`` names us)."""
    (home.path / "run").mkdir(mode=0o700, exist_ok=True)
    (home.path / "run" / "daemon.pid").write_text(f"{os.getpid()}\n")
    settings = runtime.settings.mcp_servers["sample"]
    specs, _ = server_specs({"brokered": settings}, environ)
    client = BrokerClient(home, environ, os.getpid())
    client.start(specs)
    registry = runtime.container.tools()
    for toolset, tools in server_toolsets(client, specs, client.listings(), print):
        registry.add_toolset(toolset, tools)
    return client


def one(agent: Any, tool: str) -> float:
    started = time.perf_counter()
    result = agent.dispatch(tool, {"text": "ping"})
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error or "ping" not in result.content:
        raise SystemExit(f"{tool} failed: {result.content[:500]}")
    return elapsed


def measure(agent: Any, calls: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {side: [] for side in SIDES}
    order = list(SIDES)
    for round_ in range(calls + WARM_UP):
        for side in order[round_ % len(order):] + order[:round_ % len(order)]:
            measured = one(agent, SIDES[side])
            if round_ >= WARM_UP:
                samples[side].append(measured)
    return samples


def summary(samples: dict[str, list[float]]) -> list[dict[str, Any]]:
    base = samples["in-process"]
    rows = []
    for side, values in samples.items():
        deciles = statistics.quantiles(values, n=10)
        paired = [a - b for a, b in zip(values, base, strict=True)]
        rows.append({"side": side, "median_ms": statistics.median(values),
                     "p10_ms": deciles[0], "p90_ms": deciles[-1],
                     "overhead_ms": statistics.median(paired)})
    return rows


def run(calls: int) -> dict[str, list[float]]:
    base = Path(tempfile.mkdtemp(prefix="hermes-bench-mcp-"))
    try:
        home, environ = make_home(base)
        config = compose_config(home, environ).config
        with build_runtime(home, config, environ) as runtime:
            registry = runtime.container.tools()
            registry.add_toolset(ToolsetSpec("bench", tools=("bench_echo",)),
                                 [in_process_echo()])
            broker = add_brokered(runtime, home, environ)
            agent = runtime.container.agent_factory().new_session(Interaction())
            try:
                return measure(agent, calls)
            finally:
                agent.close()
                broker.close()
                (home.path / "run" / "daemon.pid").unlink()  # the broker stops too
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", type=Path, help="write every sample here")
    args = parser.parse_args()
    samples = run(args.calls)
    load = os.getloadavg()[0]
    print(f"{args.calls} calls per side; {platform.machine()}, Python "
          f"{platform.python_version()}, load {load:.1f} on {os.cpu_count()} CPUs")
    print(f"{'side':<11} {'median ms':>10} {'p10':>7} {'p90':>7} {'overhead ms':>12}  target")
    for row in summary(samples):
        verdict = "" if row["side"] != "mcp" else (
            "ok" if row["overhead_ms"] <= TARGET_MS else "MISSED")
        print(f"{row['side']:<11} {row['median_ms']:>10.2f} {row['p10_ms']:>7.2f} "
              f"{row['p90_ms']:>7.2f} {row['overhead_ms']:>12.2f}  {verdict}")
    if args.json:
        args.json.write_text(json.dumps(samples, indent=1))


if __name__ == "__main__":
    main()
