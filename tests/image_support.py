"""Building and running the Hermes image in tests (containers/build.sh, a real dockerd)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def docker(*args: str, check: bool = True, timeout: float = 120,
           input: str | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout,
                          input=input, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} exited {done.returncode}:\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def snapshot(dest: Path) -> Path:
    """A copy of the checkout as it is now (tracked and untracked files, and .git), so
    that every build of a test session sees the same sources."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = REPO / name.decode()
        if source.is_file():
            target = dest / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    shutil.copytree(REPO / ".git", dest / ".git", symlinks=True)
    return dest


def build_image(tag: str, base: str, source: Path, *, no_cache: bool = False,
                script: str = "containers/build.sh",
                browser: bool = False) -> subprocess.CompletedProcess[str]:
    """Build ``source`` with the project's own script (stderr: BuildKit's plain progress;
    the last line of stdout names size and time); ``browser``: with Chromium."""
    argv = [str(source / script), "-t", tag, "--base", base] + (["--browser"] if browser else [])
    done = subprocess.run(argv + (["--no-cache"] if no_cache else []), capture_output=True,
                          text=True, timeout=1800, check=False, cwd=source)
    if done.returncode != 0:
        raise AssertionError(f"image build failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def cached_steps(build: subprocess.CompletedProcess[str]) -> list[str]:
    """The steps BuildKit answered from its cache instead of running them (a base image,
    ``FROM``, is an input and always "cached")."""
    titles: dict[str, str] = {}
    cached = []
    for step, _, rest in (line.partition(" ") for line in build.stderr.splitlines()):
        if rest.startswith("[") and step not in titles:
            titles[step] = rest
        elif rest == "CACHED" and " FROM " not in titles.get(step, ""):
            cached.append(titles.get(step, step))
    return cached


def run(image: str, *args: str, options: Sequence[str] = (), check: bool = True,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``docker run --rm [options] IMAGE args``: one hermes command in a new container."""
    return docker("run", "--rm", *options, image, *args, check=check, timeout=timeout)


def inspect(name: str) -> dict:
    return json.loads(docker("inspect", name).stdout)[0]


def health(name: str) -> str:
    state = inspect(name)["State"]
    return state.get("Health", {}).get("Status", "none") if state["Running"] else "exited"


def published_port(name: str, port: int = 8642) -> int:
    line = docker("port", name, f"{port}/tcp").stdout.strip().splitlines()[0]
    return int(line.rsplit(":", 1)[1])


def bridge_gateway() -> str:
    """The host's address on docker's default bridge: where containers reach host servers.

    The bridge network names its gateway when configured explicitly; otherwise it is the
    first address of its subnet (docker0's address)."""
    import ipaddress

    config = json.loads(docker("network", "inspect", "bridge", "-f",
                               "{{json .IPAM.Config}}").stdout)[0]
    if config.get("Gateway"):
        return str(config["Gateway"])
    return str(next(ipaddress.ip_network(config["Subnet"]).hosts()))
