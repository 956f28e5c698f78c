"""The image's HEALTHCHECK: in gateway mode the gateway's /health must answer 200.

Gateway mode means a `hermes ... gateway run` process runs in the container. Each
running gateway writes gateway.json in the homes it serves; every api_server
platform listed there must answer GET /health with 200. Any other command (a
one-shot, `profile list`) passes. Standard library only: it runs every interval.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path


def gateway_running() -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"gateway" in argv and b"run" in argv and any(a.endswith(b"hermes") for a in argv):
            return True
    return False


def status_files() -> list[Path]:
    root = Path(os.environ.get("HOME", "/home/hermes")) / ".hermes"
    homes = [root, *root.glob("profiles/*")]
    if os.environ.get("HERMES_HOME"):
        homes.append(Path(os.environ["HERMES_HOME"]))
    return [home / "gateway.json" for home in homes if (home / "gateway.json").is_file()]


def health_urls(status: dict[str, object]) -> list[str]:
    urls = []
    platforms = status.get("platforms")
    for platform in (platforms.values() if isinstance(platforms, dict) else []):
        detail = str(platform.get("detail", "")) if isinstance(platform, dict) else ""
        if detail.startswith("http://") and detail.endswith("/v1"):
            base = detail[: -len("/v1")].replace("//0.0.0.0:", "//127.0.0.1:")
            urls.append(base.replace("//[::]:", "//[::1]:") + "/health")
    return urls


def check() -> str | None:
    """None when healthy, else why not."""
    if not gateway_running():
        return None
    files = status_files()
    if not files:
        return "the gateway has not written its status yet"
    for file in files:
        status = json.loads(file.read_text())
        if status.get("state") != "running":
            return f"{file}: gateway {status.get('state')}"
        for url in health_urls(status):
            try:
                with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310
                    if response.status != 200:
                        return f"{url}: HTTP {response.status}"
            except (urllib.error.URLError, OSError) as exc:
                return f"{url}: {exc}"
    return None


if __name__ == "__main__":
    problem = check()
    if problem:
        print(f"unhealthy: {problem}")
        sys.exit(1)
    print("healthy")
