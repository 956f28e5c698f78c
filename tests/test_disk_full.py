"""With the disk full, a one-shot ends in one line on stderr (``error: disk full: ...``,
exit code 1), never a traceback, and nothing is lost: ``state.db`` passes SQLite's
integrity check and every earlier session is still in it. Reproduced honestly: the
Hermes root is a tiny tmpfs (mounted as root), filled to the last byte, and the real
CLI runs against the fake LLM, in-process and through the warm server."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import stop_servers
from fakellm import FakeLLM, Reply, ToolCall
from mcp_support import stdio_sample, write_profile

TMPFS_SIZE = "16m"

pytest_plugins = ["fakellm.pytest_plugin"]  # the fake_llm fixture


@pytest.fixture
def tiny_home(user_home: Path) -> Iterator[Path]:
    """``$HOME`` (the Hermes root and the working directory in it) on a tmpfs of
    ``TMPFS_SIZE``, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0755",
                              "tmpfs", str(user_home)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield user_home
    finally:
        stop_servers(user_home)  # the warm server's socket is on the tmpfs
        subprocess.run(["umount", "--lazy", str(user_home)], check=True)


def fill(directory: Path) -> Path:
    """Write zeros into ``directory/filler`` until the file system has no byte left."""
    filler = directory / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb", buffering=0) as out:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    out.write(chunk[:size])
    with pytest.raises(OSError) as full:
        (directory / "probe").write_bytes(b"x" * 4096)
    assert full.value.errno == errno.ENOSPC
    return filler


def one_shot(environ: dict[str, str], question: str, cwd: Path
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", "-z", question], env=environ,
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def sessions(db: Path) -> list[tuple[str, int]]:
    """``(first user message, message count)`` of every session, SQLite's integrity check
    first; read from a copy of the database and its WAL elsewhere (a reader of a WAL
    database needs room for its shared-memory file, which a full disk lacks)."""
    copy = Path(tempfile.mkdtemp()) / db.name
    for suffix in ("", "-wal"):
        if db.with_name(db.name + suffix).exists():
            shutil.copyfile(db.with_name(db.name + suffix), copy.with_name(copy.name + suffix))
    connection = sqlite3.connect(copy)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return connection.execute(
            "SELECT (SELECT content FROM messages m WHERE m.session_id = s.id AND "
            "m.role = 'user' ORDER BY m.id LIMIT 1), (SELECT count(*) FROM messages m "
            "WHERE m.session_id = s.id) FROM sessions s ORDER BY s.started_at").fetchall()
    finally:
        connection.close()
        shutil.rmtree(copy.parent)


def assert_one_line(proc: subprocess.CompletedProcess[str], progress: int) -> None:
    """Exit code 1; on stderr the turn's ``progress`` lines (its tool calls), then the
    error in one line naming the file."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-6000:]
    *shown, error = proc.stderr.splitlines()
    assert len(shown) == progress and all(s.startswith("  \u2699 ") for s in shown), shown
    assert error.startswith("error: disk full: cannot write "), error
    assert error.endswith("/state.db (No space left on device); free some space and run it "
                          "again"), error


@pytest.mark.both_modes
@pytest.mark.parametrize("when", ["before the turn", "during the turn", "with an MCP server"])
def test_a_turn_on_a_full_disk_ends_in_one_line_and_loses_nothing(
        environ: dict[str, str], tiny_home: Path, root: Path, fake_llm: FakeLLM,
        when: str) -> None:
    """``with an MCP server``: its log lines (``logs/mcp.log``) find the disk full too."""
    servers = {"sample": stdio_sample()} if when == "with an MCP server" else {}
    write_profile(root, fake_llm.openai_base_url, servers)
    work = tiny_home / "work"  # on the same file system: a command can fill it
    work.mkdir()
    fake_llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "echo earlier"})]),
             Reply(text="earlier answer"))
    first = one_shot(environ, "an earlier question", work)
    assert first.returncode == 0, first.stderr
    before = sessions(root / "state.db")
    assert before == [("an earlier question", 4)]

    if when != "during the turn":
        filler = fill(work)
    else:  # the model's command fills it
        filler = work / "filler"
        fake_llm.push(Reply(tool_calls=[ToolCall("terminal", {
                     "command": "head -c 64M /dev/zero > filler; seq 1 20000"})]),
                 Reply(text="x" * 200_000))
    full = one_shot(environ, "a question on a full disk " + "y" * 50_000, work)
    assert_one_line(full, progress=1 if when == "during the turn" else 0)
    # The long answer is asked for only if the tool's result could still be written (it
    # seldom can): left over, it would answer the later question.
    fake_llm.drop_pending()
    assert sessions(root / "state.db")[:1] == before

    filler.unlink()  # with room again, the profile works as before
    fake_llm.push(Reply(text="later answer"))
    later = one_shot(environ, "a later question", work)
    assert later.returncode == 0, later.stderr
    assert "later answer" in later.stdout
    assert sessions(root / "state.db")[0] == before[0]


def test_a_setting_written_to_a_full_disk_is_one_line_and_the_file_unchanged(
        environ: dict[str, str], tiny_home: Path, root: Path, fake_llm: FakeLLM) -> None:
    write_profile(root, fake_llm.openai_base_url, {})
    config = (root / "config.yaml").read_text()
    filler = fill(tiny_home)
    proc = subprocess.run([sys.executable, "-m", "hermes", "config", "set",
                           "agent.max_iterations", "7"], env=environ, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    error, = proc.stderr.splitlines() or [""]
    assert error.startswith(f"error: disk full: cannot write {root}/"), error
    assert (root / "config.yaml").read_text() == config
    filler.unlink()
