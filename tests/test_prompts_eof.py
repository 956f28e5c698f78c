"""A confirmation with nobody to answer it (standard input at its end) is a refusal like
any other: one ``error:`` line, exit code 2, nothing changed — not Click's ``Aborted!``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.sessions import SessionStore


def run_without_input(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``hermes ARGS < /dev/null`` in a real process."""
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=environ,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


def assert_refused(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    line = proc.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line, proc.stderr
    assert "Aborted" not in proc.stderr + proc.stdout
    assert "end of input" in line and "--yes" in line, line
    return line


@pytest.fixture
def session(root: Path) -> str:
    with SessionStore(root / "state.db") as store:
        session_id = store.create_session("cli", "gpt-4o", session_id="a1b2c3d4e5f6a7b8")
        store.add_message(session_id, "user", "hello")
        past = time.time() - 40 * 86400  # old enough for `prune --older-than 30d`
        store.conn.execute("UPDATE sessions SET started_at = ?, updated_at = ? WHERE id = ?",
                           [past, past, session_id])
    return session_id


def test_profile_delete_at_end_of_input(environ: dict[str, str], root: Path) -> None:
    created = subprocess.run([sys.executable, "-m", "hermes", "profile", "create", "work"],
                             env=environ, capture_output=True, text=True, timeout=120)
    assert created.returncode == 0, created.stderr
    assert "nothing deleted" in assert_refused(
        run_without_input(environ, "profile", "delete", "work"))
    assert (root / "profiles" / "work" / "profile.json").is_file()


@pytest.mark.parametrize("args", [("sessions", "delete", "a1b2"),
                                  ("sessions", "prune", "--older-than", "30d")])
def test_session_deletions_at_end_of_input(environ: dict[str, str], root: Path, session: str,
                                           args: tuple[str, ...]) -> None:
    assert_refused(run_without_input(environ, *args))
    with SessionStore(root / "state.db") as store:
        assert [m["content"] for m in store.messages(session)] == ["hello"]
