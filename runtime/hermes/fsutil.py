"""Small file-system helpers: atomic writes with explicit permissions."""

from __future__ import annotations

import os
from pathlib import Path

from hermes.errors import disk_full


def atomic_write(path: Path, text: str, *, mode: int = 0o644, durable: bool = True) -> None:
    """Write ``text`` to ``path`` atomically: a temp file in the same directory,
    fsync (unless not ``durable``: a status file a crash may lose), chmod, then one
    ``os.replace``. Readers see the old or the new file, never half of one. A private
    file's missing directories are made private (0700)."""
    if mode & 0o077:
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        private_dir(path.parent)
    import tempfile  # not at import: the warm server's client never writes (~5 ms)

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        full = disk_full(exc, path)  # the old file stays whole: say which one, in one line
        if full is not None:
            raise full from exc
        raise


def file_mode(path: Path) -> int:
    """The permission bits of ``path``."""
    return path.stat().st_mode & 0o777


def private_dir(path: Path) -> Path:
    """Make ``path`` and its missing parents, each 0700; return ``path``.

    ``mkdir(parents=True, mode=0o700)`` gives the parents the umask's mode (0755),
    which is how a Hermes root made for its first profile was left open.
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    return path
