"""The composition cache: warm starts skip Hydra, and any changed input misses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.config import compose_config
from hermes.errors import ConfigError
from hermes.home import home_from_path

PROBE = (
    "import sys, json\n"
    "from hermes.cli.main import run\n"
    "try:\n"
    "    run(sys.argv[1:])\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps('hydra' in sys.modules), file=sys.stderr)\n"
)


def show(environ: dict[str, str], *args: str) -> tuple[str, bool]:
    proc = subprocess.run([sys.executable, "-c", PROBE, "config", "show", *args], env=environ,
                          capture_output=True, text=True, timeout=120)
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


def test_warm_start_skips_hydra_and_gives_the_same_config(root: Path, environ) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("agent:\n  max_iterations: 7\n")
    cold, cold_hydra = show(environ, "provider=anthropic", "agent.personality=terse")
    warm, warm_hydra = show(environ, "provider=anthropic", "agent.personality=terse")
    assert (cold_hydra, warm_hydra) == (True, False)
    assert warm == cold and "max_iterations: 7" in warm and "personality: terse" in warm
    assert [p.stat().st_mode & 0o777 for p in (root / ".cache" / "config").iterdir()] == [0o600]


def test_a_hit_writes_nothing(root: Path, environ) -> None:
    """A warm start reads its entry and leaves it as it was (issue 26: the warm server's
    every command rewrote it)."""
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("agent:\n  max_iterations: 7\n")
    show(environ)
    [entry] = (root / ".cache" / "config").iterdir()
    written = entry.stat().st_mtime_ns, entry.stat().st_ino
    assert show(environ)[1] is False  # a hit
    assert (entry.stat().st_mtime_ns, entry.stat().st_ino) == written


def test_any_changed_input_misses(root: Path, environ, tmp_path: Path) -> None:
    home = home_from_path(root)
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("agent:\n  max_iterations: 7\n")
    assert compose_config(home, environ).config.agent.max_iterations == 7
    (root / "config.yaml").write_text("agent:\n  max_iterations: 8\n")
    assert compose_config(home, environ).config.agent.max_iterations == 8
    # a profile-local group option shadowing the packaged one
    (root / "conf" / "provider").mkdir(parents=True)
    (root / "conf" / "provider" / "openai.yaml").write_text(
        "name: openai\nprovider: openai\nmodel: local-gpt\napi_key: ${secret:OPENAI_API_KEY}\n")
    assert compose_config(home, environ).config.provider.model == "local-gpt"
    # an environment override, then a system layer
    env = environ | {"HERMES_MAX_ITERATIONS": "9"}
    assert compose_config(home, env).config.agent.max_iterations == 9
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "config.yaml").write_text("display:\n  spinner: false\n")
    env = environ | {"HERMES_CONFIG_LAYERS": str(layer)}
    assert compose_config(home, env).config.display.spinner is False
    # a secret is resolved fresh every time, never cached
    (root / ".env").write_text("OPENAI_API_KEY=sk-first-000001\n")
    assert compose_config(home, environ).config.provider.api_key == "sk-first-000001"
    (root / ".env").write_text("OPENAI_API_KEY=sk-second-00002\n")
    assert compose_config(home, environ).config.provider.api_key == "sk-second-00002"
    cached = b"".join(p.read_bytes() for p in (root / ".cache" / "config").iterdir())
    assert b"sk-first" not in cached and b"sk-second" not in cached


def test_invalid_configs_are_never_cached(root: Path, environ) -> None:
    home = home_from_path(root)
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("agent:\n  max_iterations: lots\n")
    for _ in range(2):
        with pytest.raises(ConfigError):
            compose_config(home, environ)
    assert not (root / ".cache").exists()


@pytest.mark.both_modes
def test_a_literal_key_on_the_command_line_is_written_nowhere(
        hermes_subprocess, root: Path, cli_mode: str) -> None:
    from conftest import write_fake_provider
    from fakellm import FakeLLM, Reply

    key = "sk-literal-on-the-command-line-7f3a9c"
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        llm.push(Reply(text="hello back"), Reply(text="hello again"))
        for _ in range(2):  # the second run would be the cache's hit
            proc = hermes_subprocess("-z", "hello", f"provider.api_key={key}")
            assert proc.returncode == 0, proc.stderr
        assert all(r.headers.get("authorization") == f"Bearer {key}" for r in llm.requests)
    holding = [str(p.relative_to(root)) for p in root.rglob("*")
               if p.is_file() and key.encode() in p.read_bytes()]
    assert holding == []
