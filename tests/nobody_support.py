"""Running this checkout's Hermes as an ordinary user (``nobody``, uid 65534).

The tests of what holds for an unprivileged user run ``sys.executable -m hermes`` under
``setpriv``. That needs root, and a checkout ``nobody`` may read: a clone under a
directory closed to other users (``/root``, or the 0700 one ``mktemp -d`` makes) is
not, and there ``import hermes`` fails as nobody. Outside CI those tests skip saying
which directory; on CI (``CI`` set) they fail.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
"""The command prefix that runs a program as nobody, with no supplementary groups."""

CHECKOUT = Path(__file__).resolve().parent.parent


def _closed_directory(path: Path) -> Path | None:
    """The first directory on the way to ``path`` that other users cannot enter."""
    for directory in reversed(path.parents):
        if not directory.stat().st_mode & stat.S_IXOTH:
            return directory
    return None


@functools.cache
def nobody_problem() -> str | None:
    """Why nobody cannot run this checkout's Hermes here; None when it can."""
    if os.geteuid() != 0:
        return "needs root to run commands as nobody"
    if shutil.which("setpriv") is None:
        return "needs setpriv (util-linux) to run commands as nobody"
    proc = subprocess.run([*NOBODY, sys.executable, "-c", "import hermes"], cwd="/",
                          capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode == 0:
        return None
    closed = _closed_directory(CHECKOUT / "runtime" / "hermes" / "__init__.py")
    why = (f"{closed} is closed to other users" if closed else
           (proc.stderr.strip().splitlines() or ["no output"])[-1])
    return (f"nobody cannot import this checkout's hermes ({why}): clone the repository "
            "where other users may read it")


def nobody_prefix() -> list[str]:
    """``NOBODY``; the calling test skips (fails on CI) when nobody cannot run Hermes."""
    problem = nobody_problem()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(problem)
        pytest.skip(problem)
    return NOBODY
