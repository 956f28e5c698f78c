"""Start a real `hermes gateway run` process for tests, with the fake LLM behind it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

from fakellm import RecordedRequest, Reply, ToolCall

KEY = "test-key-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def configure(home: Path, llm_url: str, port: int = 0, *, key: str | None = KEY,
              host: str = "127.0.0.1", **extra: object) -> None:
    """A profile home serving the API server on ``port`` (0: any free port, found in the
    gateway's status file), its model the fake LLM."""
    home.mkdir(parents=True, exist_ok=True)
    config = {"defaults": [{"override provider": "custom"}, {"override platforms": "api_server"}],
              "provider": {"model": "gpt-4o", "api_base": llm_url, "timeout": 30,
                           "max_retries": 0, "retry_backoff": 0},
              "platforms": {"enabled": {"api_server": {"settings": {"port": port,
                                                                    "host": host}}}}}
    for dotted, value in extra.items():
        node: dict = config
        *parents, last = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    lines = ["CUSTOM_API_KEY=sk-fake-test-key-1234"] + ([f"API_SERVER_KEY={key}"] if key else [])
    (home / ".env").write_text("\n".join(lines) + "\n")
    (home / ".env").chmod(0o600)


def tool_then_answer(answer: str = "done") -> Callable[[RecordedRequest], Reply]:
    """A fake-LLM responder: one tool call per conversation, then ``answer``."""

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("todo", {"todos": [
                {"id": "1", "content": "answer", "status": "in_progress"}]})])
        return Reply(text=answer)

    return respond


@dataclass
class Gateway:
    proc: subprocess.Popen[str]
    home: Path
    log: Path
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text()


@contextmanager
def gateway(environ: dict[str, str], home: Path, args: Sequence[str] = (),
            ready: bool = True, as_user: Sequence[str] = ()) -> Iterator[Gateway]:
    """``hermes gateway run ARGS`` for ``home``; unless ``ready`` is False, waits until its
    API server listens (the port comes from the status file: no port can be stolen).
    ``as_user``: a command prefix that runs it as another user (``setpriv ... --``)."""
    log = Path(environ["HOME"]) / f"gateway-{time.monotonic_ns()}.log"
    with log.open("w") as out:
        proc = subprocess.Popen([*as_user, sys.executable, "-m", "hermes", "gateway", "run",
                                 *args],
                                env=environ, stdout=out, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    running = Gateway(proc, home, log)
    try:
        if ready:
            running.port = wait_listening(running)
        yield running
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def wait_listening(gw: Gateway, timeout: float = 60) -> int:
    """The port of the gateway's API server, once it is running and healthy."""
    deadline = time.monotonic() + timeout
    status = gw.home / "gateway.json"
    while time.monotonic() < deadline:
        if gw.proc.poll() is not None:
            raise AssertionError(f"gateway exited {gw.proc.returncode}: {gw.output()}")
        try:
            info = json.loads(status.read_text())
            detail = info["platforms"]["api_server"]["detail"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
            continue
        port = int(detail.rsplit(":", 1)[1].split("/")[0])
        assert info["pid"] == gw.proc.pid
        if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
            return port
        time.sleep(0.05)
    raise AssertionError(f"gateway not listening in {timeout} s: {gw.output()}")
