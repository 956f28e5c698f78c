"""Run Hydra's composition in a forked child, so a long-lived process never loads it.

Hydra and OmegaConf stay in memory once imported (~5 MiB). A gateway composes each
profile once at start and then runs for days: it composes in a child that returns
the plain composed dict and exits. Whatever the child cannot hand back (it crashed,
its error does not pickle), the caller composes in-process instead, so behaviour
and errors are those of an in-process composition.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def call_in_child(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in a forked child: its result, or its exception raised here."""
    if not hasattr(os, "fork") or "hydra" in sys.modules:
        return function(*args)  # nothing to save: compose here
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compose, send the outcome, leave without cleanup
        status = 0
        try:
            os.close(read)
            try:
                outcome: tuple[bool, object] = (True, function(*args))
            except Exception as exc:  # noqa: BLE001 - sent to the parent, raised there
                outcome = (False, exc)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(pickle.dumps(outcome))
        except BaseException:  # noqa: BLE001 - the parent composes in-process instead
            status = 1
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    try:
        ok, value = pickle.loads(data)
    except Exception:  # noqa: BLE001 - nothing usable came back
        return function(*args)
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]
