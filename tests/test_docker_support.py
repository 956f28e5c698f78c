"""The docker test support itself (tests/docker_support.py), run in an inner pytest:
outside CI it never starts dockerd and removes the images its session built; on CI it
fails when docker is missing and keeps its images."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import REPO


def inner_pytest(tmp_path: Path, body: str, path: str, **env: str
                 ) -> subprocess.CompletedProcess[str]:
    """Run ``body`` as a test file with the project's conftest, in a clean environment."""
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(body)
    environ = {"PATH": path, "HOME": str(tmp_path), "PYTHONPATH": str(REPO / "tests"),
               "LANG": "C.UTF-8", **env}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-rsf",
                           "-p", "no:cacheprovider", str(test_file)], cwd=tmp_path,
                          env=environ, capture_output=True, text=True, timeout=600)


def stub(directory: Path, name: str, script: str) -> None:
    directory.mkdir(exist_ok=True)
    (directory / name).write_text(f"#!/bin/sh\n{script}\n")
    (directory / name).chmod(0o755)


NEEDS_DOCKER = "def test_needs_docker(docker_daemon):\n    pass\n"


def test_outside_ci_a_missing_daemon_skips_and_dockerd_is_never_started(
        tmp_path: Path) -> None:
    bin_dir, started = tmp_path / "bin", tmp_path / "dockerd-started"
    stub(bin_dir, "docker", "echo 'Cannot connect to the Docker daemon' >&2; exit 1")
    stub(bin_dir, "dockerd", f"echo started >> {started}")
    done = inner_pytest(tmp_path, NEEDS_DOCKER, f"{bin_dir}:/usr/bin:/bin")
    assert "1 skipped" in done.stdout, done.stdout
    assert "no docker daemon answers" in done.stdout and "-m 'not docker'" in done.stdout
    assert not started.exists()


def test_on_ci_missing_docker_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = inner_pytest(tmp_path, NEEDS_DOCKER, str(tmp_path / "empty"), CI="1")
    assert "1 error" in done.stdout or "1 failed" in done.stdout, done.stdout
    assert "docker is not installed" in done.stdout and "CI must run" in done.stdout


@pytest.mark.usefixtures("docker_daemon")
@pytest.mark.parametrize("ci", ["", "1"])
def test_images_the_session_built_are_removed_outside_ci(tmp_path: Path, base_image: str,
                                                          ci: str) -> None:
    tag = f"hermes-test-built:{uuid.uuid4().hex[:8]}"
    body = ("import subprocess\n\n"
            "def test_builds(built_images, base_image):\n"
            f"    built_images.append({tag!r})\n"
            f"    subprocess.run(['docker', 'build', '-q', '-t', {tag!r}, '-'], check=True,\n"
            f"                   input=b'FROM {base_image}\\nLABEL hermes.test=built\\n')\n")
    try:
        done = inner_pytest(tmp_path, body, os.environ["PATH"], CI=ci)
        assert "1 passed" in done.stdout, done.stdout + done.stderr
        kept = subprocess.run(["docker", "image", "inspect", tag], capture_output=True,
                              check=False).returncode == 0
        assert kept == bool(ci)
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)
