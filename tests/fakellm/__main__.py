"""Run the fake LLM as a process: ``python -m tests.fakellm --port 0 --script script.json``.

Prints the bound port on stdout once it accepts connections, serves until SIGTERM or
SIGINT, then reports the request count and any problems on stderr (exit 1 if any).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from .script_json import load_script
from .server import FakeLLM


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakellm", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--script", type=Path, help="JSON list of turns (see script_json.py)")
    parser.add_argument("--chunk-chars", type=int, default=8)
    args = parser.parse_args(argv)
    turns, fallback = load_script(args.script) if args.script else ([], None)

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with FakeLLM(turns, fallback=fallback, strict=False, chunk_chars=args.chunk_chars,
                 host=args.host, port=args.port) as llm:
        print(llm.port, flush=True)
        stop.wait()
    problems = llm.problems
    print(f"fake LLM: served {len(llm.requests)} requests, {llm.pending} turns left",
          *problems, sep="\n", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
