"""The warm per-profile server behind `hermes -z` and `hermes chat`: started on first use,
served warm, thin client, Ctrl-C relayed, peer credentials, staleness, idle exit, races;
what it keeps warm across commands (litellm's first-call set-up) and that a changed
config.yaml, .env or a new skill still reaches the next command."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall


@pytest.fixture
def daemon_env(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda r: Reply(text="pong"), strict=False) as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def hermes(env: dict[str, str], *args: str, cwd: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=env, text=True,
                          capture_output=True, timeout=timeout, cwd=cwd)


def server_pid(root: Path) -> int | None:
    try:
        return int((root / "run" / "daemon.pid").read_text())
    except (OSError, ValueError):
        return None


def served(root: Path) -> int:
    return int(json.loads((root / "run" / "daemon.json").read_text())["served"])


def test_first_run_leaves_a_server_and_the_next_use_it(daemon_env, root: Path,
                                                       llm: FakeLLM) -> None:
    first = hermes(daemon_env, "-z", "ping")
    assert (first.returncode, first.stdout) == (0, "pong\n"), first.stderr
    pid = server_pid(root)
    assert pid is not None and served(root) == 1
    second = hermes(daemon_env, "-z", "ping")
    assert (second.returncode, second.stdout) == (0, "pong\n")
    assert server_pid(root) == pid and served(root) == 2
    status = hermes(daemon_env, "daemon", "status")
    assert status.returncode == 0 and f"pid {pid}" in status.stdout
    assert (root / "run").stat().st_mode & 0o777 == 0o700
    assert (root / "run" / "daemon.sock").stat().st_mode & 0o777 == 0o600
    stopped = hermes(daemon_env, "daemon", "stop")
    assert "stopped" in stopped.stdout and server_pid(root) is None
    assert hermes(daemon_env, "daemon", "status").returncode == 1


def test_a_home_deep_in_the_file_system_is_served_warm(daemon_env, tmp_path: Path) -> None:
    """Its socket's path is longer than a socket address holds (107 bytes): the server
    failed to bind ("AF_UNIX path too long") and every command ran cold."""
    home = tmp_path.joinpath(*["a-directory-with-a-rather-long-name"] * 3) / "hermes"
    assert len(str(home / "run" / "daemon.sock")) > 107
    env = daemon_env | {"HERMES_HOME": str(home)}
    with FakeLLM(fallback=lambda r: Reply(text="pong"), strict=False) as fake:
        write_fake_provider(home, fake.openai_base_url)
        for _ in range(2):
            done = hermes(env, "-z", "ping")
            assert (done.returncode, done.stdout) == (0, "pong\n"), done.stderr
        assert server_pid(home) is not None and served(home) == 2
        assert (home / "run" / "daemon.sock").stat().st_mode & 0o777 == 0o600
        assert "stopped" in hermes(env, "daemon", "stop").stdout
    assert server_pid(home) is None


def test_the_command_runs_in_the_clients_directory_and_environment(
        daemon_env, root: Path, tmp_path: Path) -> None:
    (tmp_path / "here.txt").write_text("I am here\n")
    from fakellm import ToolCall

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal", {"command": "cat here.txt; "
                                                           "echo $CLIENT_ONLY"})])
        return Reply(text=str(request.tool_results[0].content))

    with FakeLLM(fallback=respond, strict=False) as llm:
        write_fake_provider(root, llm.openai_base_url)
        env = daemon_env | {"CLIENT_ONLY": "from-the-client"}
        hermes(env, "-z", "warm up", cwd=tmp_path)  # starts the server elsewhere
        proc = hermes(env, "-z", "show me", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "I am here" in proc.stdout and "from-the-client" in proc.stdout
    assert served(root) == 2


def test_the_client_stays_thin(daemon_env, root: Path, llm: FakeLLM) -> None:
    hermes(daemon_env, "-z", "start the server")
    probe = ("import sys, json\nfrom hermes.entry import run\ntry:\n    run(['-z', 'ping'])\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "heavy = [m for m in ('litellm', 'hydra', 'omegaconf', 'docker', 'typer') "
             "if m in sys.modules]\nprint(json.dumps([code, heavy]))")
    proc = subprocess.run([sys.executable, "-c", probe], env=daemon_env, text=True,
                          capture_output=True, timeout=60)
    answer, report = proc.stdout.splitlines()
    assert answer == "pong" and json.loads(report) == [0, []], proc.stderr


def test_no_daemon_flag_env_and_config_run_in_process(daemon_env, root: Path,
                                                      llm: FakeLLM) -> None:
    assert hermes(daemon_env, "-z", "ping", "--no-daemon").stdout == "pong\n"
    assert hermes(daemon_env | {"HERMES_NO_DAEMON": "1"}, "chat", "-q", "ping").stdout == \
        "pong\n"
    config = root / "config.yaml"
    config.write_text(config.read_text() + "runtime:\n  daemon: off\n")
    assert hermes(daemon_env, "-z", "ping").stdout == "pong\n"
    assert server_pid(root) is None and not (root / "run" / "daemon.sock").exists()


@contextmanager
def slow_on_request(root: Path) -> Iterator[FakeLLM]:
    """A fake that holds any question containing "slow" until the block ends."""
    release = threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        if "slow" in (request.last_user_text or ""):
            release.wait(30)
        return Reply(text="pong")

    with FakeLLM(fallback=respond, strict=False) as llm:
        write_fake_provider(root, llm.openai_base_url)
        try:
            yield llm
        finally:
            release.set()


def test_ctrl_c_in_the_client_interrupts_the_turn(daemon_env, root: Path) -> None:
    with slow_on_request(root) as llm:
        hermes(daemon_env, "-z", "warm up")
        client = subprocess.Popen([sys.executable, "-m", "hermes", "-z", "slow question"],
                                  env=daemon_env, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        llm.wait_for_requests(2, timeout=30)
        client.send_signal(signal.SIGINT)
        out, err = client.communicate(timeout=30)
    assert client.returncode == 130, err
    assert "interrupting" in err and "session " in err
    session = err.rsplit("session ", 1)[1].split()[0]
    shown = hermes(daemon_env | {"HERMES_NO_DAEMON": "1"}, "sessions", "show", session)
    assert shown.returncode == 0 and "slow question" in shown.stdout


def test_a_server_dying_mid_turn_is_one_clear_line(daemon_env, root: Path) -> None:
    with slow_on_request(root) as llm:
        hermes(daemon_env, "-z", "warm up")
        client = subprocess.Popen([sys.executable, "-m", "hermes", "-z", "slow one"],
                                  env=daemon_env, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        llm.wait_for_requests(2, timeout=30)
        for child in _children(server_pid(root) or 0):
            os.kill(child, signal.SIGKILL)
        out, err = client.communicate(timeout=30)
    assert client.returncode == 1 and out == ""
    assert err.strip().startswith("error: the hermes server stopped") and "Traceback" not in err
    listing = hermes(daemon_env | {"HERMES_NO_DAEMON": "1"}, "sessions", "list")
    assert "slow one" in listing.stdout


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        found.extend(int(c) for c in children)
    return found


def test_peer_credentials_are_checked(daemon_env, root: Path, llm: FakeLLM) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another user")
    hermes(daemon_env, "-z", "start the server")
    before = served(root)
    socket_path = root / "run" / "daemon.sock"
    opened = [(p, p.stat().st_mode & 0o777) for p in socket_path.parents if p != Path("/")]
    for path, mode in opened:  # let another user reach the socket at all
        path.chmod(mode | 0o011)
    socket_path.chmod(0o777)
    try:
        verdict = _connect_as_nobody(socket_path)
    finally:
        for path, mode in opened:
            path.chmod(mode)
    assert verdict == "closed"
    assert served(root) == before


def _connect_as_nobody(socket_path: Path) -> str:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(reader)
        try:
            os.setgid(65534)
            os.setuid(65534)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(socket_path))
            sock.settimeout(10)
            sock.sendall(b"\x00\x00\x00\x02{}")
            os.write(writer, b"closed" if sock.recv(100) == b"" else b"answered")
        except (ConnectionResetError, BrokenPipeError):  # closed unread: not served either
            os.write(writer, b"closed")
        except OSError as exc:
            os.write(writer, f"error {exc}".encode())
        os._exit(0)
    os.close(writer)
    verdict = os.read(reader, 100).decode()
    os.waitpid(pid, 0)
    return verdict


def test_a_stale_server_is_replaced(daemon_env, root: Path, llm: FakeLLM) -> None:
    hermes(daemon_env, "-z", "start the server")
    old = server_pid(root)
    probe = ("import hermes\nhermes.__version__ = '0.0.0-other'\nfrom hermes.entry import run\n"
             "run(['-z', 'ping'])")
    proc = subprocess.run([sys.executable, "-c", probe], env=daemon_env, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "pong\n", proc.stderr
    deadline = time.monotonic() + 30
    while server_pid(root) == old and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server_pid(root) != old


def test_an_edited_checkout_replaces_the_server(daemon_env, root: Path, llm: FakeLLM,
                                                tmp_path: Path) -> None:
    """A server runs the code it loaded: once a source file of its copy changes, the next
    command is served by a new server (before, the server compared the client's copy with
    the files as they were then, always the same)."""
    package = Path(importlib.import_module("hermes").__file__ or "").parent
    copy = tmp_path / "site" / "hermes"
    shutil.copytree(package, copy, symlinks=True)
    for data, inside in (("conf", "conf"), ("profiles", "example_profiles")):
        if not (copy / inside).exists():  # a checkout keeps them beside the package
            (copy / inside).symlink_to(package.parent.parent / data)
    env = {**daemon_env, "PYTHONPATH": str(copy.parent)}
    first = hermes(env, "-z", "start the server")
    assert (first.returncode, first.stdout) == (0, "pong\n"), first.stderr
    old = server_pid(root)
    status = json.loads((root / "run" / "daemon.json").read_text())
    assert old is not None and status["install"].startswith(f"{copy}@")  # the copy runs
    edited = copy / "argv.py"
    later = time.time() + 60  # newer than every file of the copy
    os.utime(edited, (later, later))
    again = hermes(env, "-z", "ping")
    assert (again.returncode, again.stdout) == (0, "pong\n"), again.stderr
    wait_until(lambda: server_pid(root) not in (None, old), timeout=30,
               what="a new server for the edited copy")


def test_the_server_exits_when_idle(daemon_env, root: Path, llm: FakeLLM) -> None:
    config = root / "config.yaml"
    config.write_text(config.read_text() + "runtime:\n  idle_timeout: 1\n")
    hermes(daemon_env, "-z", "ping")
    deadline = time.monotonic() + 30
    while (root / "run" / "daemon.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (root / "run" / "daemon.sock").exists()
    assert server_pid(root) is None


def test_racing_clients_share_one_server(daemon_env, root: Path, llm: FakeLLM) -> None:
    clients = [subprocess.Popen([sys.executable, "-m", "hermes", "-z", f"race {i}"],
                                env=daemon_env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE) for i in range(3)]
    results = [c.communicate(timeout=120) for c in clients]
    assert [out for out, _ in results] == ["pong\n"] * 3
    assert served(root) == 3
    assert _servers_for(root) == [server_pid(root)]


def _servers_for(root: Path) -> list[int]:
    """Live (not zombie) `hermes daemon serve` processes whose HERMES_HOME is ``root``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"daemon" in cmdline and b"serve" in cmdline and state != "Z" and \
                f"HERMES_HOME={root}".encode() in environ:
            found.append(int(proc.name))
    return found


def test_a_server_that_cannot_start_falls_back(daemon_env, root: Path, llm: FakeLLM) -> None:
    config = root / "config.yaml"
    config.write_text(config.read_text() + "agent:\n  no_such_key: 1\n")
    quiet = hermes(daemon_env, "-z", "ping")
    loud = hermes(daemon_env, "-v", "-z", "ping")
    for proc in (quiet, loud):  # the in-process run reports the real problem
        assert proc.returncode == 2 and "no_such_key" in proc.stderr
    assert "hermes:" not in quiet.stderr and "running in-process" in loud.stderr
    assert server_pid(root) is None


def test_a_client_in_another_mount_namespace_runs_in_process(daemon_env, root: Path,
                                                             tmp_path: Path) -> None:
    """Another container on the same volume (here: another mount namespace, made with
    ``unshare -m``) sees other files: the warm server never runs its commands."""
    if os.getuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare(1) to make another mount namespace")
    from fakellm import ToolCall

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal",
                                              {"command": f"cat {private}/src/seen"})])
        return Reply(text=str(request.tool_results[0].content))

    private = tmp_path / "private"
    private.mkdir()
    (private / "seen").write_text("seen from the server\n")

    def in_namespace(cwd: str) -> subprocess.CompletedProcess[str]:
        # The file is inside both working directories: the sandbox gives commands a
        # private /tmp, where only the working directory stays visible.
        script = (f"mount -t tmpfs none {private} && mkdir {private}/src && "
                  f"echo seen from the client > {private}/src/seen && cd {cwd} && "
                  f"exec {sys.executable} -m hermes -z 'show me'")
        return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                              env=daemon_env, text=True, capture_output=True, timeout=120)

    with FakeLLM(fallback=respond, strict=False) as llm:
        write_fake_provider(root, llm.openai_base_url)
        hermes(daemon_env, "-z", "warm up")
        before = served(root)
        # the same directory in both namespaces, and one only the client has (`-w /src`)
        for cwd in (str(tmp_path), f"{private}/src"):
            proc = in_namespace(cwd)
            assert proc.returncode == 0, proc.stderr
            assert "seen from the client" in proc.stdout, (cwd, proc.stdout)
    assert served(root) == before and server_pid(root) is not None


# -- kept warm across commands (issue 26), and changes still seen ------------

WARMED_CALL = """
import json, os, sys, threading
from hermes.cli.daemon_cmd import served_commands
from hermes.daemon.server import warm_up
from hermes.config import compose_config
from hermes.home import resolve_home
from hermes.models.litellm_client import LiteLLMClient

home = resolve_home(None, os.environ)
warm_up(home, dict(os.environ), served_commands())
threads = threading.active_count()
provider = compose_config(home, dict(os.environ)).config.provider
before = set(sys.modules)
tools = [{"type": "function", "function": {"name": "read_file", "description": "r",
          "parameters": {"type": "object", "properties": {}}}}]
reply = LiteLLMClient(provider).complete([{"role": "user", "content": "ping"}], tools,
                                         stream=True)
print(json.dumps({"threads": threads, "reply": reply.content,
                  "imported": sorted(set(sys.modules) - before)}))
"""


def test_a_warmed_server_makes_its_first_model_call_without_importing(
        environ: dict[str, str], root: Path, llm: FakeLLM) -> None:
    run = subprocess.run([sys.executable, "-c", WARMED_CALL], env=environ, text=True,
                         capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["threads"] == 1  # the server still forks from a single thread
    assert seen["reply"] == "pong"
    assert seen["imported"] == []  # litellm's first-call modules came with the warm-up
    assert [r.model for r in llm.requests] == ["gpt-4o"]  # the warm-up called no one


def test_changes_between_two_warm_one_shots_are_seen_by_the_second(
        daemon_env: dict[str, str], root: Path, llm: FakeLLM) -> None:
    first = hermes(daemon_env, "-z", "ping")
    assert (first.returncode, first.stdout) == (0, "pong\n"), first.stderr
    assert (root / "run" / "daemon.pid").exists()  # the second goes through the server
    config = yaml.safe_load((root / "config.yaml").read_text())
    config["provider"]["model"] = "changed-model"
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (root / ".env").write_text("CUSTOM_API_KEY=sk-changed-key-5678\n")
    skill = root / "skills" / "brand-new-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: brand-new-skill\ndescription: \"Files the "
                                    "quarterly widget report.\"\n---\n\nSteps...\n")
    second = hermes(daemon_env, "-z", "ping")
    assert (second.returncode, second.stdout) == (0, "pong\n"), second.stderr
    request = llm.requests[-1]
    assert request.model == "changed-model"
    assert request.headers.get("authorization") == "Bearer sk-changed-key-5678"
    assert "brand-new-skill" in json.dumps(request.body["messages"][0])
    assert json.loads((root / "run" / "daemon.json").read_text())["served"] == 2


def test_warm_commands_reuse_the_servers_sandbox_probe(daemon_env, root: Path,
                                                       tmp_path: Path) -> None:
    real = shutil.which("bwrap")
    if real is None:
        pytest.skip("needs bubblewrap")
    shims, log = tmp_path / "bin", tmp_path / "bwrap.log"
    shims.mkdir()
    (shims / "bwrap").write_text(f"#!/bin/sh\necho run >> {log}\nexec {real} \"$@\"\n")
    (shims / "bwrap").chmod(0o755)
    notes = tmp_path / "notes.txt"
    notes.write_text("the token\n")

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("read_file", {"path": str(notes)})])
        return Reply(text="read")

    env = daemon_env | {"PATH": f"{shims}:{daemon_env['PATH']}"}
    with FakeLLM(fallback=respond, strict=False) as fake:
        write_fake_provider(root, fake.openai_base_url)
        for _ in range(3):
            done = hermes(env, "-z", "read the notes", cwd=tmp_path)
            assert (done.returncode, done.stdout) == (0, "read\n"), done.stderr
    assert log.read_text().split() == ["run"]  # the server's one probe, before any fork
