"""The ssh environment against a real sshd on a loopback port: commands, file tools over
SFTP, connection reuse, unknown-host refusal, timeout and cancellation."""

from __future__ import annotations

import getpass
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.environments.ssh import SSHEnvironment
from hermes.errors import SandboxUnavailable
from hermes.home import home_from_path
from hermes.tools.context import ToolContext
from ssh_support import Sshd, start_sshd
from test_tools_support import call, make_registry


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.process.terminate()
    server.process.wait(10)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def runtime(root: Path, environ: dict[str, str], sshd: Sshd, *overrides: str) -> Runtime:
    home = home_from_path(root).ensure()
    settings = ["environment=ssh", "environment.ssh.host=127.0.0.1",
                f"environment.ssh.port={sshd.port}", f"environment.ssh.user={getpass.getuser()}",
                f"environment.ssh.key_file={sshd.user_key}",
                f"environment.ssh.known_hosts={sshd.known_hosts}",
                "environment.ssh.connect_timeout=10", *overrides]
    return build_runtime(home, compose_config(home, environ, settings).config, environ)


def ssh_of(rt: Runtime) -> SSHEnvironment:
    environment = rt.container.environment()
    assert isinstance(environment, SSHEnvironment)
    return environment


def test_commands_run_on_the_host_over_one_reused_connection(
        root: Path, environ: dict[str, str], sshd: Sshd, project: Path) -> None:
    with runtime(root, environ, sshd, f"environment.cwd={project}") as rt:
        remote = ssh_of(rt)
        first = remote.run("pwd; echo $SSH_CONNECTION; echo oops >&2")
        assert first.exit_code == 0
        lines = first.output.splitlines()  # stderr is merged, in arrival order
        assert lines[:2] == [str(project), lines[1]] and lines[1].endswith(f" {sshd.port}")
        assert "oops" in lines
        transport = remote.transport()
        assert remote.run("exit 3").exit_code == 3
        assert remote.transport() is transport  # reused, not reconnected
        transport.close()  # a dropped connection is opened again
        assert remote.run("echo again").output == "again\n"
        assert remote.transport() is not transport


def test_file_tools_act_over_sftp(root: Path, environ: dict[str, str], sshd: Sshd,
                                  project: Path) -> None:
    tools = make_registry(["file"])
    with runtime(root, environ, sshd, f"environment.cwd={project}") as rt:
        ctx = ToolContext.for_session(rt.home, ssh_of(rt), "s1", environ=environ)
        written = call(tools, ctx, "write_file", {"path": "pkg/mod.py", "content": "a = 1\n"})
        assert written["path"] == str(project / "pkg" / "mod.py") and written["created"]
        target = project / "pkg" / "mod.py"
        assert target.read_text() == "a = 1\n"  # this test's sshd is this machine
        target.chmod(0o600)
        call(tools, ctx, "patch", {"path": "pkg/mod.py", "old_string": "1", "new_string": "2"})
        assert target.read_text() == "a = 2\n" and target.stat().st_mode & 0o777 == 0o600
        read = call(tools, ctx, "read_file", {"path": str(target)})
        assert read["content"] == "     1|a = 2" and read["total_lines"] == 1
        found = call(tools, ctx, "search_files", {"pattern": "a = 2"})
        assert found["matches"] == [{"path": "pkg/mod.py", "line": 1, "text": "a = 2"}]
        missing = call(tools, ctx, "read_file", {"path": "pkg/mdo.py"})["error"]
        assert "does not exist (similar files here: mod.py)" in missing
        refused = call(tools, ctx, "write_file", {"path": "~/.ssh/authorized_keys",
                                                  "content": "k"})
        assert "credential file" in refused["error"]


def test_an_unknown_host_is_refused_unless_configured(
        root: Path, environ: dict[str, str], sshd: Sshd, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with runtime(root, environ, sshd, f"environment.ssh.known_hosts={empty}") as rt:
        with pytest.raises(SandboxUnavailable) as refused:
            ssh_of(rt).run("true")
        message = str(refused.value)
        assert f"host 127.0.0.1:{sshd.port} is not in {empty}" in message
        assert "accept_unknown_host=true" in message and "\n" not in message
        tools = make_registry(["terminal"])
        ctx = ToolContext.for_session(rt.home, ssh_of(rt), "s1", environ=environ, yolo=True)
        assert "is not in" in call(tools, ctx, "terminal", {"command": "true"})["error"]
    with runtime(root, environ, sshd, f"environment.ssh.known_hosts={empty}",
                 "environment.ssh.accept_unknown_host=true") as rt:
        assert ssh_of(rt).run("echo in").output == "in\n"
    assert sshd.host_public_key.split()[1] in empty.read_text()  # remembered


def test_timeout_and_cancellation_kill_the_command_on_the_host(
        root: Path, environ: dict[str, str], sshd: Sshd) -> None:
    def running(marker: str) -> bool:
        return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0

    with runtime(root, environ, sshd) as rt:
        remote = ssh_of(rt)
        started = time.monotonic()
        timed = remote.run("echo first; sleep 311 & sleep 312; echo never", timeout=1)
        assert timed.timed_out and timed.exit_code == 124 and timed.output == "first\n"
        assert time.monotonic() - started < 10
        assert not running("sleep 311") and not running("sleep 312")
        stop_at = time.monotonic() + 1
        cancelled = remote.run("echo go; sleep 313",
                               cancelled=lambda: time.monotonic() > stop_at)
        assert cancelled.cancelled and cancelled.output == "go\n" and not running("sleep 313")
        assert remote.run("echo alive").output == "alive\n"


def test_background_jobs_run_on_the_host(root: Path, environ: dict[str, str], sshd: Sshd,
                                         project: Path) -> None:
    tools = make_registry(["terminal", "process"])
    with runtime(root, environ, sshd, f"environment.cwd={project}") as rt:
        ctx = ToolContext.for_session(rt.home, ssh_of(rt), "s1", environ=environ)
        job = call(tools, ctx, "terminal", {"command": "pwd; exit 4", "background": True})
        done = call(tools, ctx, "process", {"action": "wait", "id": job["process_id"]})
        assert done["status"] == "exited 4" and done["new_output"] == f"{project}\n"
        long = call(tools, ctx, "terminal", {"command": "sleep 314", "background": True})
        call(tools, ctx, "process", {"action": "kill", "id": long["process_id"]})
        gone = subprocess.run(["pgrep", "-f", "sleep 314"], capture_output=True)
        assert gone.returncode == 1


@pytest.mark.parametrize("argv", [["sandbox", "--help"],
                                  ["config", "show", "environment=docker"],
                                  ["config", "show", "environment=ssh",
                                   "environment.ssh.host=build.example.org"]])
def test_management_commands_import_neither_sdk(argv: list[str],
                                                environ: dict[str, str]) -> None:
    code = ("import sys\nfrom hermes.cli.main import run\n"
            f"try:\n    run({argv!r})\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('docker', 'paramiko') if m in sys.modules], file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
