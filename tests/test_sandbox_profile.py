"""The sandbox from the profile's side: `hermes sandbox explain` against what is enforced,
`hermes doctor`, a non-root user and a setuid shell, the gateway serving two profiles,
A/B shell checks, and a machine where no sandbox works."""

# Fixtures imported from sandbox_support are these tests' parameters:
# ruff: noqa: F811

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import ok, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from gateway_support import KEY, configure, gateway
from nobody_support import nobody_prefix
from sandbox_support import (  # noqa: F401 (demo, llm, outside, workspace: fixtures)
    DEMO_SECRET,
    SSH_SECRET,
    WORK_SECRET,
    backends,
    demo,
    llm,
    make_ssh_key,
    make_work_profile,
    no_sandbox_works,
    outside,
    workspace,
)
from test_sandbox_cli import agent

BACKENDS = backends()


@pytest.mark.parametrize("backend", BACKENDS)
def test_explain_matches_what_is_enforced(
        hermes: Any, hermes_subprocess: Any, llm: FakeLLM, backend: str, root: Path,
        demo: Path, user_home: Path, workspace: Path, outside: Path) -> None:
    make_work_profile(root)
    make_ssh_key(user_home)
    allowed, other = outside / "allowed", outside / "other"
    other.mkdir()
    settings = (f"environment.local.sandbox.backend={backend}",
                f"environment.local.sandbox.allow_write=['{allowed}']")
    found = json.loads(ok(hermes("-p", "demo", "sandbox", "explain", "--json",
                                 f"environment.cwd={workspace}", *settings)))
    assert (found["mode"], found["backend"], found["confined"]) == (
        "workspace-write", backend, True)
    hidden = {item["path"]: item for item in found["hidden"]}
    assert hidden[str(root.resolve())]["exists"] and hidden[str(user_home / ".ssh")]["exists"]
    assert not hidden[str(user_home / ".aws")]["exists"]
    writable = {item["path"]: item["why"] for item in found["writable"]}
    assert list(writable) == [str(workspace), str(allowed), "/tmp"]
    # Every existing hidden path gives nothing; every writable one takes a file; the
    # directory beside them does not. /tmp is private to the command under bubblewrap
    # and the machine's own under Landlock, as explained.
    private_tmp = "private" in writable["/tmp"]
    shared = Path(tempfile.mkdtemp(dir="/tmp"))
    reads = [f"find {path} -type f -exec cat {{}} + ; cat {path}" for path in hidden
             if hidden[path]["exists"]]
    writes = [f"touch {workspace}/probe", f"touch {allowed}/probe",
              "touch /tmp/probe && test -f /tmp/probe" if private_tmp else
              f"touch {shared}/probe", f"touch {other}/probe"]
    try:
        results = agent(hermes_subprocess, llm, backend, workspace, *reads, *writes,
                        overrides=settings[1:])
        assert (shared / "probe").exists() != private_tmp
    finally:
        shutil.rmtree(shared)
    text = json.dumps(results[:len(reads)])
    for secret in (WORK_SECRET, DEMO_SECRET, SSH_SECRET):
        assert secret not in text
    assert [r["exit_code"] != 0 for r in results[len(reads):]] == [False] * 3 + [True]
    assert (workspace / "probe").exists() and (allowed / "probe").exists()
    assert not (other / "probe").exists()
    lines = ok(hermes("-p", "demo", "sandbox", "explain", f"environment.cwd={workspace}",
                      *settings))
    assert f"backend {backend}" in lines and f"  {allowed}  (" in lines
    assert "widen: hermes -p demo config set environment.local.sandbox.allow_write" in lines


@pytest.mark.parametrize("backend", BACKENDS)
def test_doctor_reports_the_backend(hermes: Any, backend: str, demo: Path) -> None:
    result = hermes("-p", "demo", "doctor", "--offline",
                    f"environment.local.sandbox.backend={backend}", env={"COLUMNS": "250"})
    row = next(line for line in ok(result).splitlines() if " sandbox " in line)
    assert row.split()[0] == "ok" and f"{backend} (configured): workspace-write" in row


def as_nobody(base: Path, llm: FakeLLM) -> tuple[Path, dict[str, str]]:
    """A Hermes root and workspace owned by ``nobody`` under ``base``; the environment
    the CLI runs with there."""
    user = base / "user"
    write_fake_provider(user / ".hermes" / "profiles" / "demo", llm.openai_base_url)
    (base / "work").mkdir()
    for path in [base, *base.rglob("*")]:
        os.chown(path, 65534, 65534)
    base.chmod(0o755)
    return base / "work", {"HOME": str(user), "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
                           "HERMES_NO_DAEMON": "1"}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a setuid-root shell")
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_setuid_root_shell_does_not_elevate(llm: FakeLLM, backend: str,
                                              outside: Path) -> None:
    workspace, environ = as_nobody(outside, llm)
    shell = workspace / "rootsh"
    shutil.copy2("/bin/bash", shell)
    os.chown(shell, 0, 0)
    shell.chmod(0o4755)

    def effective_uid(mode: str) -> str:
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "./rootsh -p -c 'id -u'"})]),
                 Reply(text="done"))
        proc = subprocess.run(
            [*nobody_prefix(),
             sys.executable, "-m", "hermes", "-p", "demo", "-z", "go",
             f"environment.cwd={workspace}", f"environment.local.sandbox.backend={backend}",
             f"environment.local.sandbox.mode={mode}", "approvals.mode=off"],
            env=environ, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        return str(json.loads(llm.requests[-1].tool_results[0].content)["output"]).strip()

    assert effective_uid("off") == "0"  # the control: unconfined, the copy elevates
    assert effective_uid("workspace-write") == "65534"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gateway_confines_each_profile_by_its_own_config(
        root: Path, environ: dict[str, str], llm: FakeLLM, backend: str, workspace: Path,
        outside: Path) -> None:
    """Two profiles in one gateway: each runtime's commands get its own policy (alpha may
    write to ``outside``, beta may not) and neither sees any profile's secrets."""
    for name in ("alpha", "beta"):
        extra = {"environment__local__sandbox__allow_write": [str(outside)]} \
            if name == "alpha" else {}
        configure(root / "profiles" / name, llm.openai_base_url,
                  environment__cwd=str(workspace),
                  environment__local__sandbox__backend=backend, **extra)
    for name in ("alpha", "beta"):
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": command}) for command in (
            f"cat {root}/profiles/*/.env", f"echo {name} > {outside}/{name}.txt")]),
            Reply(text="done"))
    with gateway(environ, root / "profiles" / "alpha", ["--profiles", "alpha,beta"]) as gw:
        for name in ("alpha", "beta"):
            reply = httpx.post(f"{gw.url}/v1/chat/completions", timeout=60,
                               headers={"Authorization": f"Bearer {KEY}"},
                               json={"model": name, "messages": [{"role": "user",
                                                                  "content": "go"}]})
            assert reply.status_code == 200, reply.text
    results = [json.loads(result.content) for request in llm.requests
               if request.tool_results for result in request.tool_results]
    assert "sk-fake-test-key" not in json.dumps(results) and KEY not in json.dumps(results)
    assert (outside / "alpha.txt").read_text() == "alpha\n"
    assert not (outside / "beta.txt").exists() and results[3]["exit_code"] != 0


def test_ab_shell_checks_are_confined(hermes: Any, root: Path, llm: FakeLLM,
                                      tmp_path: Path) -> None:
    write_fake_provider(root, llm.openai_base_url)
    memory = root / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("The user works on Hermes.\n")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in (
        {"id": "inside", "prompt": "hi", "files": {"data.txt": "alpha\n"},
         "expect": {"shell": "grep -q alpha data.txt && echo ok > made.txt"}},
        {"id": "intrude", "prompt": "hi",
         "expect": {"shell": f"echo INJECTED >> {memory}"}})))
    llm.push(Reply(text="hello"), Reply(text="hello"))
    result = hermes("ab", "--tasks", str(tasks), "--concurrency", "1")
    eid = ok(result) and result.stderr.split("experiment ", 1)[1].split(":", 1)[0]
    table = ok(hermes("ab", "show", eid, "--runs"))
    assert "inside#1  pass" in table and "intrude#1  FAIL shell" in table
    assert memory.read_text() == "The user works on Hermes.\n"


def test_where_no_sandbox_works_it_is_said_once_per_session_and_by_doctor(
        environ: dict[str, str], llm: FakeLLM, demo: Path, workspace: Path) -> None:
    confine_nothing = no_sandbox_works()

    def hermes(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hermes", "-p", "demo", *args],
                              env=environ | {"COLUMNS": "250"}, capture_output=True,
                              text=True, timeout=120, check=False,
                              preexec_fn=confine_nothing)

    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "echo one"})]),
             Reply(tool_calls=[ToolCall("terminal", {"command": "echo two"})]),
             Reply(text="done"))
    proc = hermes("-z", "go", f"environment.cwd={workspace}")
    assert proc.returncode == 0, proc.stderr
    first, second = (json.loads(r.content) for r in llm.requests[-1].tool_results)
    assert first["output"] == "one\n" and second["output"] == "two\n"
    assert "commands run unconfined" in first["sandbox"] and "bubblewrap" in first["sandbox"]
    assert "apt install bubblewrap" in first["sandbox"] and "sandbox" not in second
    doctor = hermes("doctor", "--offline").stdout
    row = next(line for line in doctor.splitlines() if " sandbox " in line)
    assert row.split()[0] == "warn" and "unconfined" in row
    assert "apt install bubblewrap" in doctor
    # Naming a backend that does not work refuses the command instead of running it bare.
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "touch ran"})]),
             Reply(text="done"))
    proc = hermes("-z", "go", f"environment.cwd={workspace}",
                  "environment.local.sandbox.backend=bubblewrap")
    assert proc.returncode == 0, proc.stderr
    refused = json.loads(llm.requests[-1].tool_results[0].content)
    assert "backend is bubblewrap, which does not work here" in refused["error"]
    assert not (workspace / "ran").exists()
