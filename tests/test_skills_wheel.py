"""The bundled skills (and plugins) ship in the wheel, where the store (and the plugin
discovery) looks for them."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import REPO
from hermes.plugins.discovery import BUNDLED_DIR as BUNDLED_PLUGINS
from hermes.skills.store import BUNDLED_DIR


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_the_wheel_carries_every_bundled_skill(tmp_path: Path) -> None:
    built = subprocess.run(["uv", "build", "--wheel", "--out-dir", str(tmp_path), str(REPO)],
                           capture_output=True, text=True, timeout=600,
                           env=os.environ | {"UV_NO_PROGRESS": "1"})
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = {f"hermes/skills/bundled/{p.relative_to(BUNDLED_DIR).as_posix()}"
               for p in BUNDLED_DIR.rglob("SKILL.md")}
    assert len(bundled) >= 3 and bundled <= names
    plugins = {f"hermes/plugins/bundled/{p.relative_to(BUNDLED_PLUGINS).as_posix()}"
               for p in BUNDLED_PLUGINS.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert plugins and plugins <= names
    examples = {f"hermes/example_profiles/{p.relative_to(REPO / 'profiles').as_posix()}"
                for p in (REPO / "profiles").rglob("*") if p.is_file()}
    assert examples and examples <= names and "hermes/profiles/manager.py" in names
    board = REPO / "runtime" / "hermes" / "dashboard"  # templates and vendored files
    served = {f"hermes/dashboard/{p.relative_to(board).as_posix()}"
              for part in ("templates", "static") for p in (board / part).rglob("*") if p.is_file()}
    assert "hermes/dashboard/static/htmx.min.js" in served and served <= names
    installed = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(installed)
    found = subprocess.run(["python", "-c", "from hermes.config.layers import examples_dir; "
                            "print(sorted(p.name for p in examples_dir().iterdir()))"],
                           capture_output=True, text=True, cwd=tmp_path,
                           env=os.environ | {"PYTHONPATH": str(installed)})
    assert found.stdout.strip() == str(sorted(p.name for p in (REPO / "profiles").iterdir()))
