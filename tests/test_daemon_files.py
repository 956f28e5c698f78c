"""The warm server's run files (``daemon.pid``, ``daemon.json``) appear only whole: each
is renamed into place, never created or rewritten under its own name, so a client
reading one never sees it empty or half-written. Watched with inotify (Linux)."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import wait_until

IN_MODIFY, IN_MOVED_TO, IN_CREATE, IN_NONBLOCK = 0x2, 0x80, 0x100, 0o4000
EVENT = struct.Struct("iIII")


def watch(directory: Path) -> int:
    """An inotify descriptor reporting files created, changed or renamed into ``directory``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_NONBLOCK)
    if fd < 0:
        pytest.skip(f"inotify is not available: errno {ctypes.get_errno()}")
    assert libc.inotify_add_watch(fd, str(directory).encode(),
                                  IN_CREATE | IN_MODIFY | IN_MOVED_TO) >= 0
    return fd


def events(fd: int) -> list[tuple[str, int]]:
    """``(file name, event mask)`` of every event so far."""
    found: list[tuple[str, int]] = []
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return found
        offset = 0
        while offset < len(data):
            _, mask, _, length = EVENT.unpack_from(data, offset)
            start = offset + EVENT.size
            found.append((data[start:start + length].rstrip(b"\0").decode(), mask))
            offset = start + length


def test_the_run_files_appear_only_whole(environ: dict[str, str], root: Path) -> None:
    run = root / "run"
    run.mkdir(parents=True, mode=0o700)
    fd = watch(run)
    try:
        env = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
        started = subprocess.run([sys.executable, "-m", "hermes", "daemon", "start"], env=env,
                                 capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        wait_until(lambda: (run / "daemon.pid").exists() and (run / "daemon.json").exists(),
                   30, "the run files")
        seen = events(fd)  # inotify queued each event as it happened
    finally:
        os.close(fd)
    for name in ("daemon.pid", "daemon.json"):
        written = [mask for found, mask in seen if found == name]
        assert written and all(mask == IN_MOVED_TO for mask in written), (name, seen)
        assert (run / name).read_text().endswith("\n")
        assert (run / name).stat().st_mode & 0o777 == 0o600
