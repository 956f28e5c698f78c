"""How Hermes starts a Python process of its own (the warm server, the MCP broker).

``python -m X`` puts its working directory first on ``sys.path``, so a ``yaml.py``
(or ``hermes.py``, or a stdlib name such as ``json.py``) there is imported before the
real module. A home and a project directory hold files the model may have written:
nothing in them may ever be importable. So each such process runs with ``-P``
(nothing prepended to ``sys.path``) in a neutral working directory, and gets what it
needs (``HERMES_HOME``, the client's directory) explicitly.

``-P`` rather than ``-I``: ``-I`` also ignores ``PYTHONPATH`` and the user's
site-packages, which the Nix package (extra Python packages on ``PYTHONPATH``), a
``pip install --user`` and a source checkout rely on. ``PYTHONPATH`` keeps its
absolute entries; an empty or relative one (a stray ``:``) would name the working
directory at start, so it is dropped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

NEUTRAL_CWD = "/"
"""The working directory of every Python process Hermes starts: nothing there is ours."""


def python_argv(module: str, *args: str) -> list[str]:
    """``python -P -m module args...`` with this interpreter."""
    return [sys.executable, "-P", "-m", module, *args]


def python_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for such a process: ``PYTHONPATH`` without empty or relative entries."""
    env = dict(environ)
    if "PYTHONPATH" in env:
        kept = [entry for entry in env["PYTHONPATH"].split(os.pathsep) if os.path.isabs(entry)]
        if kept:
            env["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del env["PYTHONPATH"]
    return env
