"""The README's install as a uv tool, run as printed on a fresh machine: a clone, a new
``$HOME`` (no ``~/.local/bin`` on PATH, no shell profile), uv's defaults. ``hermes``
must answer in a new shell, and the tool's environment must hold exactly the versions
``uv.lock`` pins (plain ``uv tool install .`` resolves the indirect dependencies anew
and got newer ones: boto3, botocore, certifi, charset-normalizer, packaging, regex).
uv's own cache is kept, so nothing is downloaded that the machine already has; the test
is skipped, with the reason, when a package is neither cached nor reachable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import REPO

INSTALL = ["uv export --frozen --no-dev --no-emit-project | uv tool install --constraints - .",
           "uv tool update-shell"]
"""The README's commands (Install: "every shell")."""
NETWORK = ("offline", "network", "failed to fetch", "dns", "connect", "not found in the cache")


def fresh_machine(home: Path) -> dict[str, str]:
    """This machine's environment as a new user's: its own HOME and login shell, no
    virtual environment or uv tool settings; uv's cache and this Python kept (so uv
    downloads neither)."""
    cache = subprocess.run(["uv", "cache", "dir"], capture_output=True, text=True,
                           check=True).stdout.strip()
    drop = ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "UV_TOOL_DIR", "UV_TOOL_BIN_DIR",
            "XDG_BIN_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    path = os.pathsep.join(entry for entry in env.get("PATH", "").split(os.pathsep)
                           if entry and not (Path(entry) / "hermes").exists())  # no venv's
    base = getattr(sys, "_base_executable", sys.executable)
    return env | {"HOME": str(home), "PATH": path, "SHELL": "/bin/bash",
                  "UV_CACHE_DIR": cache, "UV_PYTHON": base}


@pytest.mark.skipif(shutil.which("uv") is None or shutil.which("git") is None,
                    reason="uv and git are needed")
def test_the_readme_tool_install_works_on_a_fresh_machine_with_the_locked_versions(
        tmp_path: Path) -> None:
    clone, home = tmp_path / "hermes", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env = fresh_machine(home)
    for command in INSTALL:
        done = subprocess.run(["bash", "-c", f"set -eo pipefail; {command}"], cwd=clone,
                              env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0 and any(w in done.stderr.lower() for w in NETWORK):
            pytest.skip(f"a locked package is neither cached nor reachable: "
                        f"{done.stderr.strip()[-200:]}")
        assert done.returncode == 0, (command, done.stderr)
    assert shutil.which("hermes", path=env["PATH"]) is None  # not on this shell's PATH
    version = subprocess.run(["bash", "-lc", "hermes --version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("hermes 0."), version
    assert tool_versions(env) == locked_versions(clone / "uv.lock", tool_versions(env))


def tool_versions(env: dict[str, str]) -> dict[str, str]:
    """Every distribution in the tool's environment, by normalised name."""
    tools = subprocess.run(["uv", "tool", "dir"], env=env, capture_output=True, text=True,
                           check=True).stdout.strip()
    python = Path(tools) / "hermes-runtime" / "bin" / "python"
    listed = subprocess.run(["uv", "pip", "list", "--python", str(python), "--format", "json"],
                            env=env, capture_output=True, text=True, check=True).stdout
    return {_normal(p["name"]): p["version"] for p in json.loads(listed)}


def locked_versions(lock: Path, names: dict[str, str]) -> dict[str, str | None]:
    """What ``uv.lock`` pins for each of ``names`` (None: not locked)."""
    locked = {_normal(p["name"]): p.get("version")
              for p in tomllib.loads(lock.read_text())["package"]}
    return {name: locked.get(name) for name in names}


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")
