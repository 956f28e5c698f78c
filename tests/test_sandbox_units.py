"""The sandbox's parts with real processes: policies, Landlock's sibling grants and
their cache, read-only mode, deny_read, io_uring, and bad settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import refused
from hermes.config.schema import SandboxSettings
from hermes.environments.local import LocalEnvironment
from hermes.environments.sandbox.landlock import grants
from hermes.errors import SandboxUnavailable
from hermes.home import Home, home_for
from sandbox_support import backends, make_ssh_key

BACKENDS = backends()


def environment(tmp_path: Path, cwd: Path, **settings: object) -> LocalEnvironment:
    home = profile(tmp_path)
    environ = {"HOME": str(tmp_path / "user"), "PATH": os.environ["PATH"]}
    return LocalEnvironment(home, str(cwd), 30, environ, SandboxSettings(**settings))


def profile(tmp_path: Path) -> Home:
    return home_for(tmp_path / "user" / ".hermes", "demo").ensure()


def test_grants_cover_everything_but_the_hidden_paths(tmp_path: Path) -> None:
    for name in ("a/x/deep", "a/y", "a/secret/inner", "b"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "a" / "file").write_text("")
    (tmp_path / "a" / "link").symlink_to(tmp_path / "a" / "secret")
    stamps: dict[Path, tuple[int, int]] = {}
    granted = list(grants(tmp_path, [tmp_path / "a" / "secret"], stamps))
    assert granted == [tmp_path / "a" / "file", tmp_path / "a" / "x", tmp_path / "a" / "y",
                       tmp_path / "b"]  # the symlink to the hidden path is not followed
    assert set(stamps) == {tmp_path, tmp_path / "a"}
    assert list(grants(tmp_path / "b", [tmp_path / "a" / "secret"], {})) == [tmp_path / "b"]
    assert list(grants(tmp_path / "a" / "secret" / "inner", [tmp_path / "a" / "secret"],
                       {})) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_new_entry_beside_a_hidden_path_is_seen_by_the_next_command(
        tmp_path: Path, backend: str) -> None:
    """The working directory holds the Hermes root: Landlock grants its entries one by
    one and must notice one made after its ruleset was built."""
    env = environment(tmp_path, tmp_path, backend=backend)
    assert env.run("true").exit_code == 0
    (tmp_path / "later").mkdir()
    (tmp_path / "later" / "note.txt").write_text("made later\n")
    result = env.run("cat later/note.txt && echo more >> later/note.txt")
    env.stop()
    assert (result.exit_code, result.output) == (0, "made later\n")
    assert (tmp_path / "later" / "note.txt").read_text() == "made later\nmore\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_mode_and_deny_read(tmp_path: Path, backend: str) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "private").mkdir(parents=True)
    (workspace / "private" / "data.txt").write_text("private-data-5e1\n")
    (workspace / "readme.txt").write_text("readable\n")
    make_ssh_key(tmp_path / "user")
    env = environment(tmp_path, workspace, backend=backend, mode="read-only",
                      deny_read=[str(workspace / "private")])
    read = env.run("cat readme.txt")
    hidden = env.run("cat private/data.txt")
    write = env.run("echo x > new.txt")
    env.stop()
    assert (read.exit_code, read.output) == (0, "readable\n")
    assert hidden.exit_code != 0 and "private-data" not in hidden.output
    assert write.exit_code != 0 and not (workspace / "new.txt").exists()
    note = env.failure_note(write) or ""
    assert "read-only" in note and "nothing can be written" in note


@pytest.mark.parametrize("backend", BACKENDS)
def test_io_uring_and_unix_sockets(tmp_path: Path, backend: str) -> None:
    """io_uring could open sockets past a seccomp filter: Landlock's filter refuses it;
    a Unix socket in a visible path stays usable under bubblewrap only (as explained)."""
    env = environment(tmp_path, tmp_path, backend=backend)
    (tmp_path / "probe.py").write_text(
        "import ctypes, socket\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "params = ctypes.create_string_buffer(120)\n"
        "print(libc.syscall(425, 1, params), ctypes.get_errno())\n"
        "socket.socket(socket.AF_UNIX)\nprint('unix ok')\n")
    result = env.run(f"{sys.executable} probe.py")
    env.stop()
    if backend == "landlock":
        assert result.output.startswith("-1 38\n") and "Permission denied" in result.output
    else:
        assert result.output.endswith("unix ok\n")


def test_a_working_directory_in_the_hermes_root_is_refused(tmp_path: Path) -> None:
    home = profile(tmp_path)
    env = environment(tmp_path, home.path)
    with pytest.raises(SandboxUnavailable) as caught:
        env.run("true")
    message = str(caught.value)
    assert f"the working directory {home.path} is inside" in message
    assert "environment.cwd" in message and "environment.local.sandbox.mode=off" in message
    inside = environment(tmp_path, tmp_path, allow_write=[str(home.root / "skills")])
    with pytest.raises(SandboxUnavailable, match="environment.local.sandbox.allow_write: "):
        inside.run("true")


def test_bad_sandbox_settings_are_refused(hermes, root: Path) -> None:
    root.mkdir(parents=True)
    line = refused(hermes("config", "set", "environment.local.sandbox.allow_write",
                          "[cache/pip]"), "environment.local.sandbox.allow_write")
    assert "relative" in line and "~/.cache/pip" in line
    refused(hermes("config", "set", "environment.local.sandbox.backend", "firejail"),
            "environment.local.sandbox.backend", "bubblewrap")
    assert not (root / "config.yaml").exists()
    (root / "config.yaml").write_text("environment:\n  local:\n    sandbox:\n"
                                      "      network: off\n      mode: off\n")
    found = hermes("sandbox", "explain", "--json")
    assert found.exit_code == 0, found.stderr
    assert '"mode": "off"' in found.stdout and '"confined": false' in found.stdout


def test_the_readme_commands(hermes, root: Path, user_home: Path) -> None:
    """The Safety section's three commands, as written."""
    root.mkdir(parents=True)
    shown = hermes("sandbox", "explain")
    assert shown.exit_code == 0, shown.stderr
    assert "read: everything except" in shown.stdout and f"  {root}  (" in shown.stdout
    assert hermes("config", "set", "environment.local.sandbox.allow_write",
                  "[~/.cache/pip]").exit_code == 0
    assert hermes("config", "set", "environment.local.sandbox.network", "off").exit_code == 0
    widened = hermes("sandbox", "explain").stdout
    assert f"  {user_home}/.cache/pip  (environment.local.sandbox.allow_write)" in widened
    assert "network: off" in widened


def test_bubblewrap_failing_to_set_up_is_told_apart_from_the_command(tmp_path: Path) -> None:
    """bwrap fails before the command when a mount changes while it binds / (a docker
    build): such a run is tried again; a command's own output never is."""
    import subprocess

    from hermes.environments.sandbox.bubblewrap import Bubblewrap

    backend = Bubblewrap(os.environ)
    if backend.problem() is not None:
        pytest.skip(f"bubblewrap does not work here: {backend.problem()}")
    env = environment(tmp_path, tmp_path, backend="bubblewrap")
    # A failure of bwrap's own, as it prints it (here: a bind source that is not there).
    own = subprocess.run([str(backend.executable), "--ro-bind", str(tmp_path / "gone"), "/x",
                          "true"], capture_output=True, text=True, check=False)
    assert env.sandbox.setup_failed(own.returncode, own.stderr), own.stderr
    told = env.run("echo 'bwrap: not really' ; echo more; exit 1")
    assert told.exit_code == 1 and not env.sandbox.setup_failed(told.exit_code, told.output)
    assert not env.sandbox.setup_failed(0, "bwrap: fine\n")


def test_landlock_without_perl_confines_through_preexec(tmp_path: Path) -> None:
    """Without Perl on PATH, Landlock is applied between fork and exec (slower, the same)."""
    from hermes.environments.sandbox.landlock import Landlock

    if (problem := Landlock({}).problem()) is not None:
        pytest.skip(f"landlock does not work here: {problem}")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    key = make_ssh_key(tmp_path / "user")
    home = profile(tmp_path)
    env = LocalEnvironment(home, str(workspace), 30, {"HOME": str(tmp_path / "user"),
                                                     "PATH": "/nonexistent"},
                           SandboxSettings(backend="landlock"))
    read = env.run(f"/bin/cat {key}")
    write = env.run("/bin/echo made > made.txt")
    unix = env.run(f"{sys.executable} -c 'import socket; socket.socket(socket.AF_UNIX)'")
    backend = env.sandbox.choice().backend
    env.stop()
    assert backend is not None and getattr(backend, "perl", "?") is None
    assert read.exit_code != 0 and "Permission denied" in read.output
    assert write.exit_code == 0 and (workspace / "made.txt").read_text() == "made\n"
    assert unix.exit_code != 0 and "Permission denied" in unix.output


@pytest.mark.parametrize("backend", BACKENDS)
def test_programs_on_path_under_tmp_stay_runnable(
        tmp_path: Path, backend: str) -> None:
    """A project's virtualenv made in /tmp: bubblewrap's private /tmp must not hide it
    from the commands that run its programs (tmp_path is under /tmp), nor make it
    writable."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib").mkdir()
    (venv / "lib" / "data.txt").write_text("from the venv\n")
    tool = venv / "bin" / "venv-tool"
    tool.write_text(f"#!/bin/sh\ncat {venv / 'lib' / 'data.txt'}\n")
    tool.chmod(0o755)
    workspace = Path("/var/tmp") / f"hermes-test-{os.getpid()}-{tmp_path.name}"
    workspace.mkdir(parents=True, exist_ok=True)
    try:
        home = profile(tmp_path)
        environ = {"HOME": str(tmp_path / "user"),
                   "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        env = LocalEnvironment(home, str(workspace), 30, environ, SandboxSettings(backend=backend))
        ran = env.run("venv-tool")
        wrote = env.run(f"echo x > {venv / 'lib' / 'new.txt'}")
        env.stop()
    finally:
        import shutil

        shutil.rmtree(workspace, ignore_errors=True)
    assert (ran.exit_code, ran.output) == (0, "from the venv\n")
    if backend == "bubblewrap":  # Landlock lets commands write the machine's own /tmp
        assert wrote.exit_code != 0 and not (venv / "lib" / "new.txt").exists()
