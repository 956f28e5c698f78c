"""Importing a library without the optional modules it loads only because they are
installed (a foundation module: the standard library only)."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Hide(importlib.abc.MetaPathFinder):
    def __init__(self, names: tuple[str, ...]):
        self.names = names

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name in self.names or name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"{name} is hidden during this import", name=name)


@contextmanager
def hidden_during_import(names: tuple[str, ...]) -> Iterator[None]:
    """Within the block, importing any of ``names`` (or a submodule) raises
    ``ModuleNotFoundError``, so a library's ``try: import x except ImportError`` skips
    it. Modules already imported stay as they are; after the block anything imports
    them as usual."""
    hide = _Hide(tuple(n for n in names if n not in sys.modules))
    sys.meta_path.insert(0, hide)
    try:
        yield
    finally:
        sys.meta_path.remove(hide)
