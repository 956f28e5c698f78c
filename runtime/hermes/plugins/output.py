"""Where a plugin's ``print()`` goes: standard error, never standard output.

Standard output carries what a command answers (``hermes -z`` prints only the answer
there, for scripts). Plugins written for hermes-agent print freely — at import, in
``register``, in hooks and tools — so while plugin code runs, what it writes to
``sys.stdout`` goes to ``sys.stderr`` instead. A plugin's own CLI command is not
guarded: its output is the command's answer.

The switch is per call, not per process: ``plugin_code()`` marks the running context
(a context variable, so a hook's worker thread and the turn's thread never mix), and a
router put over ``sys.stdout`` sends a marked write to standard error and every other
write on unchanged. The router is put over whatever ``sys.stdout`` is when plugin code
first runs there (a warm server's child replaces it per command), once.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

_IN_PLUGIN: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_plugin_code",
                                                                  default=False)
_INSTALL = threading.Lock()


class StdoutRouter:
    """Stands for ``sys.stdout``: writes made by plugin code go to ``sys.stderr``."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def _target(self) -> Any:
        return sys.stderr if _IN_PLUGIN.get() else self.stream

    def write(self, text: str) -> int:
        return int(self._target().write(text))

    def writelines(self, lines: Any) -> None:
        self._target().writelines(lines)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _route() -> None:
    """Put the router over ``sys.stdout`` unless it is there already."""
    with _INSTALL:
        if not isinstance(sys.stdout, StdoutRouter) and sys.stdout is not None:
            sys.stdout = StdoutRouter(sys.stdout)  # type: ignore[assignment]


@contextlib.contextmanager
def plugin_code() -> Iterator[None]:
    """Within: this context's writes to ``sys.stdout`` go to ``sys.stderr``."""
    _route()
    token = _IN_PLUGIN.set(True)
    try:
        yield
    finally:
        _IN_PLUGIN.reset(token)


def guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` run as plugin code (see ``plugin_code``)."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with plugin_code():
            return function(*args, **kwargs)

    return run
