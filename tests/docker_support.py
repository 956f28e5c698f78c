"""A real dockerd for tests: started here when none answers, and the Debian base image.

Tests use the session fixtures ``docker_daemon`` and ``base_image`` (registered in
conftest). Without a docker installation the tests skip with the reason, except on CI
(``CI`` set), where a missing daemon is a failure: CI installs docker.io.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BASE_IMAGE = "hermes-base:bookworm"


def docker_answers() -> bool:
    try:
        done = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the docker tests: .ci/run installs docker.io)")
    pytest.skip(reason)


def ensure_docker_daemon(log_dir: Path) -> None:
    """Return once a docker daemon answers, starting ``dockerd`` if none runs."""
    if docker_answers():
        return
    if shutil.which("docker") is None or shutil.which("dockerd") is None:
        _unavailable("docker is not installed (apt-get install docker.io)")
    if os.geteuid() != 0:
        _unavailable("no docker daemon answers and starting dockerd needs root")
    log = (log_dir / "dockerd.log").open("ab")
    subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT,
                     stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if docker_answers():
            return
        time.sleep(0.5)
    _unavailable(f"dockerd did not answer within 90 s (log: {log_dir / 'dockerd.log'})")


def ensure_base_image() -> str:
    """The debootstrapped Debian base image (built once per machine, ~1-3 min)."""
    done = subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True,
                          check=False)
    if done.returncode == 0:
        return BASE_IMAGE
    if shutil.which("debootstrap") is None:
        _unavailable("debootstrap is not installed (apt-get install debootstrap)")
    subprocess.run([str(REPO / "containers" / "base-image.sh"), BASE_IMAGE], check=True,
                   timeout=1200)
    return BASE_IMAGE
