"""Parsing Python source into a tree, safely from any thread.

CPython 3.11 keeps the depth counter of its AST constructor once per interpreter
(gh-106905): a parse that starts while another is building its tree — on another
thread, or from a garbage-collection callback in the same one — resets it, and the
first parse then fails with ``SystemError: AST constructor recursion depth mismatch``
although its source is fine (the full suite's import-direction test failed so on CI,
a skill's scan could in a gateway). Hermes's own parses take one lock, so they never
interleave with each other, and parse again after that error, which a parse outside
the lock (a library's, a plugin's) may still cause.
"""

from __future__ import annotations

import ast
import threading

_PARSING = threading.RLock()
"""Re-entrant: a collection callback on the parsing thread may parse too."""
_ATTEMPTS = 3


def parse_python(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``; SyntaxError and ValueError pass through."""
    with _PARSING:
        for _ in range(_ATTEMPTS - 1):
            try:
                return ast.parse(source, filename)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc):
                    raise
        return ast.parse(source, filename)
