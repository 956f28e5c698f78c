"""Other paths through which a hidden directory is reachable: the same file system
mounted a second time (a bind mount, toolbox's ``/run/host``, WSL's ``/mnt/...``).

Hiding is by path, so each hidden path is hidden at every place the mount table shows
its files: for the mount that holds a path, the path's place inside that file system is
worked out (the mount's root plus the rest), then every other mount of the same file
system that shows that place (or a part of it) gives an alias.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

MOUNTINFO = "/proc/self/mountinfo"
_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    """One line of ``/proc/self/mountinfo``."""

    device: str
    """``major:minor`` of the file system (equal for two mounts of the same one)."""
    root: str
    """The directory of the file system this mount shows."""
    point: str
    """Where it is mounted."""


def _unescape(field: str) -> str:
    return _ESCAPE.sub(lambda found: chr(int(found.group(1), 8)), field)


def parse(text: str) -> tuple[Mount, ...]:
    """The mounts of a mountinfo text, in its order (a later mount covers an earlier one
    at the same point)."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 5:
            mounts.append(Mount(fields[2], _unescape(fields[3]), _unescape(fields[4])))
    return tuple(mounts)


def read_mounts() -> tuple[Mount, ...]:
    """This process's mount table (empty where ``/proc`` is not mounted)."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as handle:
            return _parsed(handle.read())
    except OSError:
        return ()


@lru_cache(maxsize=4)
def _parsed(text: str) -> tuple[Mount, ...]:
    return parse(text)  # the table rarely changes: parsing it once per change suffices


def _within(path: str, base: str) -> bool:
    return path == base or base == "/" or path.startswith(base + "/")


def _relative(path: str, base: str) -> str:
    return "" if path == base else path[len(base):].lstrip("/") if base != "/" else \
        path.lstrip("/")


def _join(base: str, rest: str) -> str:
    return str(PurePosixPath(base) / rest) if rest else base


def holder(path: str, mounts: Iterable[Mount]) -> Mount | None:
    """The mount whose files ``path`` is among (the deepest point; the last one there)."""
    best: Mount | None = None
    for mount in mounts:
        if _within(path, mount.point) and (best is None or len(mount.point) >= len(best.point)):
            best = mount
    return best


def aliases(path: str, mounts: tuple[Mount, ...]) -> list[str]:
    """Every other path that shows ``path``'s files (an absolute, resolved path),
    or the mount points that show a part of them."""
    home = holder(path, mounts)
    if home is None:
        return []
    inside = _join(home.root, _relative(path, home.point))
    found = []
    for mount in mounts:
        if mount.device != home.device or mount is home:
            continue
        if _within(inside, mount.root):
            found.append(_join(mount.point, _relative(inside, mount.root)))
        elif _within(mount.root, inside):
            found.append(mount.point)
    return [alias for alias in dict.fromkeys(found) if alias != path]
