"""`--help` needs no runtime: asking for help starts no warm server and leaves the home
byte-identical, whatever the command (the real console script, servers allowed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HELP_ARGS = [
    ["chat", "--help"], ["chat", "-h"], ["chat", "provider=openai", "--help"],
    ["-z", "--help"], ["-z", "-h"], ["-p", "demo", "chat", "--help"],
    ["gateway", "run", "--help"], ["ab", "--help"], ["ab", "run", "-h"],
    ["daemon", "serve", "--help"], ["sessions", "--help"], ["doctor", "--help"],
]


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every path under ``root`` with its mode and (for files) its bytes."""
    return {str(p.relative_to(root)): (p.lstat().st_mode,
                                       p.read_bytes() if p.is_file() else b"")
            for p in sorted(root.rglob("*"))}


def processes_in(directory: Path) -> list[int]:
    """Processes whose working directory is under ``directory`` (a server runs in its home)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if proc.name.isdigit() and Path(cwd).is_relative_to(directory):
            found.append(int(proc.name))
    return found


@pytest.fixture
def homes(root: Path) -> Path:
    """The default profile and profile demo, each with a config: servers would start."""
    for home in (root, root / "profiles" / "demo"):
        home.mkdir(parents=True)
        home.chmod(0o700)
        (home / "config.yaml").write_text("agent:\n  max_iterations: 5\n")
    return root


@pytest.mark.parametrize("args", HELP_ARGS, ids=" ".join)
def test_help_starts_no_server_and_writes_nothing(environ, homes: Path, args: list[str]) -> None:
    env = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    before = snapshot(homes)
    done = subprocess.run([sys.executable, "-m", "hermes", *args], env=env, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    command = "hermes chat" if args[0] in ("-z", "-p") else f"hermes {' '.join(args[:-1])}"
    if args[:2] == ["chat", "provider=openai"]:
        command = "hermes chat"
    assert done.stdout.startswith(f"Usage: {command} "), done.stdout[:200]
    assert snapshot(homes) == before
    assert processes_in(homes) == []
