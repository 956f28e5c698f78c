"""The README's sections and code blocks, and a bash to run them in as a user would:
what every test that runs a README section as written needs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO

README = REPO / "README.md"
HERMES_BIN = Path(sys.executable).parent
"""Where the console script ``hermes`` is, beside the tests' python."""


def section(heading: str) -> str:
    """The README's text under the line ``heading`` (``## MCP``), up to the next heading
    of the same or a higher level."""
    text = README.read_text(encoding="utf-8")
    level = len(heading) - len(heading.lstrip("#"))
    after = re.split(rf"^{re.escape(heading)}\n", text, maxsplit=1, flags=re.M)[1]
    return re.split(rf"\n#{{2,{level}}} ", after, maxsplit=1)[0]


def code_blocks(text: str, kind: str = "sh") -> list[str]:
    """The fenced blocks of ``kind`` in ``text``."""
    return re.findall(rf"^```{kind}\n(.*?)^```", text, re.M | re.S)


def commands(block: str) -> list[str]:
    """A block's command lines, comments removed."""
    return [re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
            for line in block.splitlines() if line.strip()]


def on_path(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` with ``hermes`` found first on ``PATH``."""
    return environ | {"PATH": f"{HERMES_BIN}{os.pathsep}{environ['PATH']}"}


def run(env: dict[str, str], script: str, cwd: Path, *, flags: str = "-e",
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """``bash FLAGS -c script`` in ``env`` as given; with ``check``, it must succeed."""
    done = subprocess.run(["bash", *flags.split(), "-c", script], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=180)
    assert not check or done.returncode == 0, (script, done.stdout, done.stderr)
    return done


def bash(environ: dict[str, str], script: str, cwd: Path) -> str:
    """``script`` in a strict bash (``-euo pipefail``) with ``hermes`` on ``PATH``; it
    must succeed; its output."""
    return run(on_path(environ), script, cwd, flags="-euo pipefail").stdout
