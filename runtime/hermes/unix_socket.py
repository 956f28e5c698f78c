"""Unix sockets at paths of any length.

A socket's address holds at most 107 bytes (``sun_path``), and a Hermes home deep in a
file system (``/home/me/work/projects/.../profiles/demo/run/daemon.sock``) can be longer:
binding there failed with "AF_UNIX path too long" and the warm server never started.
Past that length the socket is bound or reached as ``/proc/self/fd/<dir>/<name>``: the
kernel resolves the directory through the process's own descriptor of it, so the short
address names the same file, with the same permissions (Linux).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

SUN_PATH_MAX = 107
"""The longest address ``bind`` and ``connect`` take (``sun_path`` less its NUL)."""


@contextlib.contextmanager
def address(path: Path) -> Iterator[str]:
    """An address for ``path``, valid inside the ``with`` block (bind or connect there)."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        yield str(path)
        return
    directory = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{directory}/{path.name}"
    finally:
        os.close(directory)
