"""The README's install (`uv sync`, an editable install of this project) compiles the
package's own modules, so a machine with PYTHONDONTWRITEBYTECODE=1 (this one, many
images) does not compile ~350 modules again at every start (0.3 s of each `gateway run`
and cold one-shot: bench/RESULTS.md, issue 26). runtime/hatch_build.py does it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

SOURCES = ("pyproject.toml", "uv.lock", "README.md", "runtime", "conf", "profiles")


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_an_editable_install_compiles_the_package_in_place(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, project / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, project / name)
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "UV_NO_EDITABLE")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(["uv", "sync", "--frozen", "--offline", "--quiet"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and any(word in done.stderr.lower()
                                    for word in ("offline", "network", "not found in the cache")):
        pytest.skip(f"uv's cache lacks a locked package: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    modules = sorted(p for p in (project / "runtime" / "hermes").rglob("*.py"))
    compiled = {p.parent.parent / (p.name.split(".")[0] + ".py")
                for p in (project / "runtime" / "hermes").rglob("__pycache__/*.pyc")}
    missing = [str(m.relative_to(project)) for m in modules if m not in compiled]
    assert modules and not missing, missing[:10]
