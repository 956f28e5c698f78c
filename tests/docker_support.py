"""A real dockerd for tests, and the Debian base image.

Tests use the session fixtures ``docker_daemon``, ``base_image`` and ``built_images``
(registered in conftest; tests using them are marked ``docker``). Outside CI they use a
docker daemon only if one already answers, and skip saying so otherwise: they never
start dockerd on someone's machine, and the images they build are removed when the
session ends. On CI (``CI`` set) dockerd is started when none answers, a missing docker
is a failure (CI installs docker.io), and images are kept for the next run; what the
run leaves behind beyond them (untagged images, BuildKit's cache over ``CI_BUILD_CACHE``)
is pruned when it ends, so runs that share a daemon do not fill its disk.
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
CI_BUILD_CACHE = "8GB"
"""BuildKit cache a CI run keeps for the next (each rebuild of the image adds ~1 GB)."""


def docker_answers() -> bool:
    try:
        done = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def in_ci() -> bool:
    return bool(os.environ.get("CI"))


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason} (CI must run the docker tests: .ci/run installs docker.io)")
    pytest.skip(f"{reason} (deselect these tests with -m 'not docker')")


def ensure_docker_daemon(log_dir: Path) -> None:
    """Return once a docker daemon answers; only on CI is ``dockerd`` started for that."""
    if docker_answers():
        return
    if shutil.which("docker") is None or shutil.which("dockerd") is None:
        _unavailable("docker is not installed (apt-get install docker.io)")
    if not in_ci():
        _unavailable("no docker daemon answers (start one: sudo systemctl start docker); "
                     "outside CI the tests never start dockerd themselves")
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


def ensure_base_image(built: list[str]) -> str:
    """The debootstrapped Debian base image (~1-3 min when missing; then in ``built``)."""
    done = subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True,
                          check=False)
    if done.returncode == 0:
        return BASE_IMAGE
    if shutil.which("debootstrap") is None:
        _unavailable("debootstrap is not installed (apt-get install debootstrap)")
    built.append(BASE_IMAGE)
    subprocess.run([str(REPO / "containers" / "base-image.sh"), BASE_IMAGE], check=True,
                   timeout=1200)
    return BASE_IMAGE


def remove_built_images(built: list[str]) -> None:
    """Outside CI, remove the images this session built (newest first: the base last).
    BuildKit's cache is left alone: it is shared with the user's own builds."""
    if in_ci():
        # A CI daemon outlives the run: a full disk failed a later run (ENOSPC mid-suite).
        _docker("image", "prune", "-f")
        _docker("builder", "prune", "-f", "--keep-storage", CI_BUILD_CACHE)
        return
    from conftest import wait_until

    for tag in reversed(built):
        image_id = _docker("image", "inspect", "-f", "{{.Id}}", tag).stdout.strip()
        if not image_id:
            continue
        # A container of the image (one a failed test left, or a `--rm` one docker is
        # still removing) would keep it, untagged.
        users = _docker("ps", "-aq", "--filter", f"ancestor={image_id}").stdout.split()
        if users:
            _docker("rm", "-f", *users)
        _docker("rmi", "-f", tag)
        wait_until(lambda i=image_id: _docker("rmi", i).returncode == 0 or
                   _docker("image", "inspect", i).returncode != 0, 60, f"removing {tag}",
                   interval=0.5)


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False,
                          timeout=120)
