"""Every directory the runtime makes in the Hermes root is 0700, like the profiles: the
root itself, logs/, run/, the config cache, tool results. ``doctor`` warns about a home
directory others can enter, with the chmod that fixes it."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_until
from fakellm import FakeLLM, Reply, ToolCall
from test_doctor import table


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def run(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "hermes", *args], env=environ,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def open_directories(root: Path) -> list[str]:
    """Directories under (and including) ``root`` that group or others may enter."""
    found = [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]
    return [f"{p} {oct(stat.S_IMODE(p.stat().st_mode))}" for p in found
            if stat.S_IMODE(p.stat().st_mode) & 0o077]


def test_every_directory_the_runtime_makes_is_private(environ: dict[str, str], root: Path,
                                                      llm: FakeLLM, tmp_path: Path) -> None:
    warm = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}  # run/ and logs/
    run(environ, "profile", "create", "work")  # makes the root
    run(environ, "-p", "work", "config", "set", "agent.max_iterations", "12")
    for key, value in (("provider", "custom"), ("provider.api_base", llm.openai_base_url),
                       ("provider.model", "gpt-4o"), ("CUSTOM_API_KEY", "sk-fake-perm-12345")):
        run(environ, "config", "set", key, value)  # the default profile: the root itself
    (tmp_path / "victim").mkdir()
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "echo hello"})]),
             Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -r {tmp_path}/victim"})]),
             Reply(text="done"))
    assert run(warm, "-z", "say hello").stdout == "done\n"
    wait_until(lambda: (root / "run").is_dir() and (root / "logs").is_dir(),
               what="the warm server's run/ and logs/")
    assert (root / "logs" / "approvals.jsonl").is_file()  # the refused rm was logged
    opened = open_directories(root)
    assert not opened, "\n".join(opened)


def test_doctor_warns_about_home_directories_others_can_enter(hermes, root: Path) -> None:
    from conftest import ok

    ok(hermes("profile", "create", "work"))
    work = root / "profiles" / "work"
    private = table(hermes("-p", "work", "doctor", "--offline"))["home permissions"]
    assert private[0] == "ok", private
    root.chmod(0o755)
    (work / "logs").chmod(0o750)
    status, detail, fix = table(hermes("-p", "work", "doctor", "--offline"))["home permissions"]
    assert status == "warn", (status, detail)
    assert str(root) in detail and str(work / "logs") in detail
    assert fix == f"chmod 700 {root} {work / 'logs'}"
    subprocess.run(fix.split(), check=True)
    assert table(hermes("-p", "work", "doctor", "--offline"))["home permissions"][0] == "ok"
