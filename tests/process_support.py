"""Servers the tests start as child processes (Synapse, dovecot): started in their own
process group, waited for until they answer, and stopped with everything they forked."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest


def launch(argv: Sequence[str], log: Path, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """``argv`` in a new session (so ``terminate`` reaches its children), output to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True)


def wait_answering(process: subprocess.Popen[bytes], answers: Callable[[], bool], name: str,
                   tail: Callable[[], str], timeout: float, interval: float = 0.1) -> None:
    """Return once ``answers()``; fail with the server's log tail if it exits or takes
    longer than ``timeout`` seconds (it is stopped then)."""
    deadline = time.monotonic() + timeout
    while not answers():
        if process.poll() is not None or time.monotonic() > deadline:
            terminate(process)
            pytest.fail(f"{name} did not start: {tail()}")
        time.sleep(interval)


def terminate(process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM the process group; SIGKILL it after 30 s."""
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
