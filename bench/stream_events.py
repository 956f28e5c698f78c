"""A streamed turn's cost through the event bus: one turn whose answer streams as 2,000
pieces (the fake LLM sends 8 characters a chunk) to a UI that counts them.

Run from the repository root:

    .venv/bin/python bench/stream_events.py              # 15 turns, median wall time
    .venv/bin/python bench/stream_events.py --turns 30 --tokens 4000

In-process: one runtime against ``tests.fakellm`` (a server thread), the agent loop and
litellm as a chat uses them. Prints the median and quartiles of the turn's wall time and
of the UI callbacks' own time; fails (exit 1) when the UI did not see every piece.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=2000)
    args = parser.parse_args()
    from fake_provider import write_fake_provider
    from fakellm import FakeLLM, Reply
    from hermes.agent.factory import Interaction
    from hermes.agent.loop import AgentEvents
    from hermes.config import compose_config
    from hermes.container import build_runtime
    from hermes.home import home_from_path
    from hermes.models.types import StreamCallbacks

    text = "".join(f"w{i:06d} " for i in range(args.tokens))  # one 8-character chunk each
    # (distinct pieces: litellm stops a stream that repeats one chunk 100 times)
    seen: list[int] = [0]

    def on_text(piece: str) -> None:
        seen[0] += 1

    walls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as llm:
        root = Path(tmp) / "home"
        write_fake_provider(root, llm.openai_base_url)
        environ = {"HOME": tmp, "PATH": "/usr/bin:/bin"}
        home = home_from_path(root)
        composed = compose_config(home, environ, ["learning.enabled=false", "toolsets=minimal"])
        with build_runtime(home, composed.config, environ) as runtime:
            how = Interaction(events=AgentEvents(stream=StreamCallbacks(on_text=on_text)))
            for turn in range(args.turns + 2):
                agent = runtime.container.agent_factory().new_session(how)  # a short
                # transcript each time: no compression, no summary calls
                llm.push(Reply(text=text))
                seen[0] = 0
                started = time.perf_counter()
                result = agent.run_turn("stream it")
                wall = time.perf_counter() - started
                if result.exit_reason != "completed" or seen[0] < args.tokens:
                    print(f"broken: {result.exit_reason} {result.error} pieces={seen[0]}")
                    return 1
                if turn >= 2:  # two warm-up turns
                    walls.append(wall)
    q = statistics.quantiles(walls, n=4)
    print(f"streamed turn, {args.tokens} pieces, {args.turns} turns: median "
          f"{statistics.median(walls) * 1000:.1f} ms (quartiles {q[0] * 1000:.1f}–"
          f"{q[2] * 1000:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
