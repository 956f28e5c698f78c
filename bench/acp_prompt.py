"""`hermes acp`: time from ``session/prompt`` to the first streamed chunk, over the model's own.

Run from the repository root:

    .venv/bin/python bench/acp_prompt.py                 # 30 prompts, 200 ms model latency
    .venv/bin/python bench/acp_prompt.py --rounds 50 --delay 500 --json /tmp/acp.json

The fake LLM (``tests.fakellm``, in this process) answers every chat request after
``--delay`` ms with a streamed text, as a provider does after its time to first token;
it records when each request arrived. ``hermes acp`` runs as an editor starts it (a
subprocess on pipes, a temporary home at the fake) and is driven by the official SDK's
client. After initialize, a new session and one untimed prompt (the runtime is warm:
litellm loaded, the HTTP connection open), each round sends ``session/prompt`` and
notes when the first ``agent_message_chunk`` arrives; each round also times a plain
streamed request to the fake (httpx, from this process) to its first data line, the
model's first token as any HTTP client sees it under the same load. Per round:

- overhead = (first chunk - prompt sent) - delay: what we add to the model's own first
  token; target median <= 50 ms;
- before = request at the model - prompt sent (the turn's set-up, litellm's request);
- after = first chunk - (request at the model + delay) (the stream to the editor);
- over_plain = (first chunk - prompt sent) - the plain request's time to first token.

Exit status 0 even when the target fails; 1 when the set-up is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
TARGET_MS = 50.0
ANSWER = "The first chunk is here, and more follows."


class Editor:
    """The client side: notes when each prompt's first answer chunk arrives."""

    def __init__(self) -> None:
        self.first_chunk: float | None = None

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if update.session_update == "agent_message_chunk" and self.first_chunk is None:
            self.first_chunk = time.monotonic()

    async def request_permission(self, **_: Any) -> Any:
        raise RuntimeError("bench: no command should need approval")


def write_home(home: Path, base_url: str) -> None:
    home.mkdir(parents=True, mode=0o700)
    config = {"defaults": [{"override provider": "custom"}],
              "provider": {"model": "gpt-4o", "api_base": base_url, "max_retries": 1},
              "learning": {"enabled": False}}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (home / ".env").write_text("CUSTOM_API_KEY=sk-bench-acp\n")
    (home / ".env").chmod(0o600)


def plain_first_token(client: Any, base_url: str) -> float:
    """Seconds from a plain streamed chat request to its first data line (a kept-alive
    httpx client, as litellm's)."""
    body = {"model": "gpt-4o", "stream": True,
            "messages": [{"role": "user", "content": "plain"}]}
    started = time.monotonic()
    with client.stream("POST", f"{base_url}/chat/completions", json=body,
                       headers={"Authorization": "Bearer sk-bench-acp"}) as reply:
        for line in reply.iter_lines():
            if line.startswith("data:"):
                return time.monotonic() - started
    raise RuntimeError("bench: the plain request got no data")


async def drive(env: dict[str, str], project: Path, rounds: int, delay: float,
                arrivals: list[float], base_url: str) -> list[dict[str, float]]:
    import httpx
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    plain_client = httpx.Client(timeout=30)
    plain_first_token(plain_client, base_url)  # its connection, as litellm's, is open
    editor = Editor()
    samples: list[dict[str, float]] = []
    async with spawn_agent_process(editor, sys.executable, "-m", "hermes", "acp", env=env,
                                   transport_kwargs={"stderr": sys.stderr}) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project))
        for index in range(rounds + 1):
            editor.first_chunk = None
            seen = len(arrivals)
            sent = time.monotonic()
            await conn.prompt(session_id=session.session_id,
                              prompt=[text_block(f"round {index}")])
            if index == 0:
                continue  # warm-up: litellm's import, the first connection
            assert editor.first_chunk is not None and len(arrivals) == seen + 1
            arrived = arrivals[seen]
            plain = await asyncio.to_thread(plain_first_token, plain_client, base_url)
            samples.append({
                "over_plain_ms": (editor.first_chunk - sent - plain) * 1000,
                "overhead_ms": (editor.first_chunk - sent - delay) * 1000,
                "before_ms": (arrived - sent) * 1000,
                "after_ms": (editor.first_chunk - arrived - delay) * 1000,
            })
    return samples


def summarise(samples: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    summary = {}
    for key in ("overhead_ms", "before_ms", "after_ms", "over_plain_ms"):
        values = sorted(sample[key] for sample in samples)
        summary[key] = {"median": statistics.median(values),
                        "p90": values[int(0.9 * (len(values) - 1))],
                        "min": values[0], "max": values[-1]}
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--delay", type=float, default=200.0, help="model latency, ms")
    ap.add_argument("--json", type=Path, help="write every sample here")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from tests.fakellm import FakeLLM, RecordedRequest, Reply
    from tests.fakellm.handler import Handler

    Handler.disable_nagle_algorithm = True
    delay = args.delay / 1000
    arrivals: list[float] = []

    def respond(request: RecordedRequest) -> Reply:
        arrivals.append(time.monotonic())
        return Reply(text=ANSWER, delay=delay)

    with tempfile.TemporaryDirectory() as tmp, FakeLLM(fallback=respond, strict=False) as llm:
        root = Path(tmp)
        write_home(root / "user" / ".hermes", llm.openai_base_url)
        (root / "project").mkdir()
        env = {"HOME": str(root / "user"), "PATH": os.environ.get("PATH", ""),
               "LANG": "C.UTF-8"}
        try:
            samples = asyncio.run(drive(env, root / "project", args.rounds, delay, arrivals,
                                        llm.openai_base_url))
        except Exception as exc:  # the set-up is broken: say so, exit 1
            print(f"bench: {exc!r}", file=sys.stderr)
            return 1
    summary = summarise(samples)
    print(f"hermes acp, {args.rounds} prompts, model delay {args.delay:g} ms, "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    for key, figures in summary.items():
        print(f"  {key:<12} " + "  ".join(f"{name} {value:6.1f}"
                                          for name, value in figures.items()))
    met = summary["overhead_ms"]["median"] <= TARGET_MS
    print(f"target: median overhead <= {TARGET_MS:g} ms: {'met' if met else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "samples": samples}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
