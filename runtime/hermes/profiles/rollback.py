"""All-or-nothing changes to several files: each step is recorded, and undone in
reverse order when a later step fails.

Each single write is atomic already (``atomic_write``); ``Rollback`` makes a
group of them (a renamed profile, the profiles that extend it, its alias
scripts) succeed or fail together.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from hermes.fsutil import atomic_write, file_mode


class Rollback:
    """Use as a context manager; an exception inside undoes every recorded step."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def write(self, path: Path, text: str, *, mode: int | None = None) -> None:
        """Replace ``path`` with ``text`` (keeping its mode unless ``mode`` is given)."""
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        old_mode = file_mode(path) if old is not None else None
        atomic_write(path, text, mode=mode or old_mode or 0o644)
        if old is None:
            self._undo.append(lambda: path.unlink(missing_ok=True))
        else:
            self._undo.append(lambda: atomic_write(path, old, mode=old_mode or 0o644))

    def rename(self, source: Path, target: Path) -> None:
        os.rename(source, target)
        self._undo.append(lambda: os.rename(target, source))

    def undo(self) -> None:
        """Undo every step, newest first; one failing undo does not stop the others."""
        for step in reversed(self._undo):
            with contextlib.suppress(OSError):
                step()
        self._undo.clear()

    def __enter__(self) -> Rollback:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is not None:
            self.undo()
