"""Start-up paid once (issue 26): what a runtime's process imports, what `hermes gateway run`
does before it serves, and what the CLI servers forked beside it hold until a CLI command
needs them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_until
from fakellm import FakeLLM
from gateway_support import configure, gateway, tool_then_answer

LITELLM_MIB = 100
"""litellm and the openai SDK alone hold ~140 MiB resident; Python with Hermes' CLI ~40."""


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=tool_then_answer("fine"), strict=False) as fake:
        yield fake


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def test_the_cli_server_beside_the_gateway_warms_up_at_its_first_command(
        root: Path, environ: dict[str, str], llm: FakeLLM) -> None:
    """The gateway forks its CLI server before anything is warm, and the server warms up
    (imports, composes) when the first command comes: a gateway nobody runs CLI commands
    beside holds no warm copy per profile."""
    configure(root, llm.openai_base_url)
    cli = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    with gateway(environ, root):
        pid_file = root / "run" / "daemon.pid"
        wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), timeout=60,
                   what="the CLI server's pid file")
        server = int(pid_file.read_text())
        cold = resident_mib(server)
        assert cold < LITELLM_MIB
        answer = subprocess.run([sys.executable, "-m", "hermes", "-z", "hello"], env=cli,
                                text=True, capture_output=True, timeout=120)
        assert (answer.returncode, answer.stdout) == (0, "fine\n"), answer.stderr
        assert int(pid_file.read_text()) == server
        warm = resident_mib(server)  # the CLI's modules and the composed config, kept
        print(f"CLI server beside the gateway: {cold:.1f} MiB, after its first command "
              f"{warm:.1f} MiB")
        # The profile's endpoint is its own OpenAI-compatible one: spoken to directly,
        # so the server never loads litellm (~100 MiB more).
        assert cold + 10 < warm < LITELLM_MIB


RUNTIME_MODULES = """
import sys
import hermes.container, hermes.cli.chat_cmd, hermes.cli.chat_repl
print(sorted(m for m in ("fastapi", "starlette", "pydantic_settings") if m in sys.modules))
import fastapi, pydantic_settings  # noqa: anything else still imports them as usual
print("fastapi", fastapi.__version__)
"""


def test_opening_a_runtime_leaves_out_the_web_framework(environ: dict[str, str]) -> None:
    """dependency_injector loads FastAPI, Starlette and pydantic-settings when installed
    (for wiring and ``from_pydantic``, unused here): a one-shot, chat or cron run paid
    ~0.3 s and ~16 MiB for them; the API server imports them itself."""
    proc = subprocess.run([sys.executable, "-c", RUNTIME_MODULES], env=environ,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == "[]"
    assert proc.stdout.splitlines()[1].startswith("fastapi ")


COMPOSE = """
import os, sys
from hermes.config import compose_config
from hermes.home import resolve_home
composed = compose_config(resolve_home(None, os.environ), os.environ)
print(composed.config.provider.api_key, composed.display["provider"]["api_key"],
      "omegaconf" in sys.modules)
"""


def test_a_cached_config_with_only_secrets_to_resolve_needs_no_omegaconf(
        root: Path, environ: dict[str, str]) -> None:
    """Resolving ``${secret:NAME}`` values (the packaged defaults' only interpolations)
    no longer imports and runs OmegaConf: ~0.1 s of every one-shot and of every command
    of the warm server; the values are OmegaConf's."""
    configure(root, "http://127.0.0.1:9/v1")
    env = environ | {"HERMES_HOME": str(root)}
    first = subprocess.run([sys.executable, "-c", COMPOSE], env=env, text=True,
                           capture_output=True, timeout=120)  # Hydra composes, fills the cache
    assert first.returncode == 0, first.stderr
    again = subprocess.run([sys.executable, "-c", COMPOSE], env=env, text=True,
                           capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert first.stdout.split()[:2] == again.stdout.split()[:2] == [
        "sk-fake-test-key-1234", "<redacted>"]
    assert again.stdout.split()[2] == "False"
