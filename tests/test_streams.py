"""The wrapper remote commands run in (docker exec, ssh): group id first, one stream."""

from __future__ import annotations

import os
import subprocess

from hermes.environments.streams import _Output, wrap_command


def run_wrapped(command: str, cwd: str | None = None) -> tuple[str, str]:
    done = subprocess.run(["/bin/sh", "-c", wrap_command(command, cwd)], capture_output=True,
                          text=True, timeout=30, check=True)
    return done.stdout, done.stderr


def test_stderr_comes_through_stdout_in_the_order_written() -> None:
    # Docker carries an exec's stdout and stderr in two pipes with no order between
    # them: a stderr line once overtook the group id line and was taken for it.
    out, err = run_wrapped("echo one >&2; echo two; echo three >&2")
    assert err == ""
    group, *lines = out.splitlines()
    assert int(group) > 1 and lines == ["one", "two", "three"]


def test_the_group_id_leads_and_is_the_commands_process_group(tmp_path) -> None:
    out, _ = run_wrapped("pwd; ps -o pgid= -p $$", str(tmp_path))
    output = _Output()
    output.add(out.encode())
    cwd, pgid = output.text().splitlines()
    assert output.group == int(pgid) and output.group != os.getpgid(0)
    assert cwd == str(tmp_path)


def test_a_missing_directory_is_said_in_the_output() -> None:
    done = subprocess.run(["/bin/sh", "-c", wrap_command("echo ran", "/no/such/dir")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "ran" not in done.stdout
    assert "/no/such/dir" in done.stdout and done.stderr == ""
