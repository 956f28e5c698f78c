"""Nothing in a home or a project is importable by a Python process Hermes starts (the
warm server, its forked commands, the MCP broker): each runs ``python -P`` in ``/``,
so a ``yaml.py`` the model wrote there is never run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from hermes.python_child import python_environ
from mcp_support import stdio_sample, write_profile

PLANTED = ("hermes", "yaml", "json", "mcp", "litellm", "pydantic", "typer", "httpx")
"""Modules the server, its commands or the broker import (the package itself, its
dependencies, a stdlib one), each planted as ``<name>.py``."""
CONSOLE_SCRIPT = Path(sys.executable).parent / "hermes"
"""The client as users run it: a console script puts its own directory on sys.path,
never the working directory."""


def plant(directory: Path, markers: Path) -> None:
    for name in PLANTED:
        marker = markers / f"{directory.name}-{name}"
        (directory / f"{name}.py").write_text(
            f"import os\nos.close(os.open({str(marker)!r}, os.O_CREAT | os.O_WRONLY, 0o644))\n")


def respond(request: RecordedRequest) -> Reply:
    if "pid" in (request.last_user_text or "") and not request.tool_results:
        return Reply(tool_calls=[ToolCall("mcp_sample_pid", {})])
    if request.tool_results:
        text = json.loads(request.tool_results[-1].content)["content"]
        return Reply(text="pid " + re.sub(r"<[^>]+>", "", text).strip())
    return Reply(text="pong")


def one_shot(env: dict[str, str], cwd: Path, question: str) -> str:
    done = subprocess.run([str(CONSOLE_SCRIPT), "-z", question], env=env, cwd=cwd, text=True,
                          capture_output=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def started_as(pid: int) -> tuple[list[str], str]:
    """A process's argv and working directory."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    return argv, os.readlink(f"/proc/{pid}/cwd")


def test_the_warm_server_and_the_mcp_broker_import_nothing_from_the_home_or_project(
        environ: dict[str, str], root: Path, tmp_path: Path) -> None:
    markers, project = tmp_path / "markers", tmp_path / "project"
    markers.mkdir()
    project.mkdir()
    warm = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    with FakeLLM(fallback=respond, strict=False) as llm:
        write_profile(root, llm.openai_base_url, {})
        plant(root, markers)
        plant(project, markers)
        # the server starts for this command, with planted modules around it
        assert one_shot(warm, project, "ping") == "pong"
        assert sorted(p.name for p in markers.iterdir()) == []
        server = int((root / "run" / "daemon.pid").read_text())
        assert started_as(server)[1] == "/" and "-P" in started_as(server)[0]
        # a command of the running server starts the MCP broker
        write_profile(root, llm.openai_base_url, {"sample": stdio_sample()})
        answer = one_shot(warm, project, "what is your pid?")
    assert re.fullmatch(r"pid \d+", answer), answer
    served = json.loads((root / "run" / "daemon.json").read_text())["served"]
    assert served == 2  # both commands ran in the warm server
    broker = wait_until(lambda: [int(p.name) for p in Path("/proc").iterdir()
                                 if p.name.isdigit() and _is_broker(int(p.name), root)],
                        what="the MCP broker")
    assert isinstance(broker, list)
    argv, cwd = started_as(broker[0])
    assert cwd == "/" and argv[1:4] == ["-P", "-m", "hermes.mcp.broker"]
    assert sorted(p.name for p in markers.iterdir()) == []


def _is_broker(pid: int, root: Path) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"hermes.mcp.broker" in argv and str(root).encode() in argv


def test_pythonpath_keeps_only_absolute_entries() -> None:
    """A stray ``:`` in PYTHONPATH names the working directory at start: dropped."""
    assert python_environ({"PYTHONPATH": ":/opt/extra:src:", "A": "b"}) == \
        {"PYTHONPATH": "/opt/extra", "A": "b"}
    assert python_environ({"PYTHONPATH": ":"}) == {}
    assert python_environ({"A": "b"}) == {"A": "b"}


def test_an_alias_without_a_console_script_runs_python_minus_p() -> None:
    probe = ("import sys\nsys.executable = '/nowhere/bin/python'\n"
             "from hermes.profiles.links import alias_script\nprint(alias_script('work'))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert "exec /nowhere/bin/python -P -m hermes -p work \"$@\"" in done.stdout


def test_pip_for_a_plugin_imports_nothing_from_the_working_directory(
        environ: dict[str, str], root: Path, tmp_path: Path) -> None:
    """Without uv, ``plugins install pip:SPEC`` runs this interpreter's pip, in the user's
    directory (SPEC may be a path there) but with nothing from it on sys.path."""
    markers, project = tmp_path / "markers", tmp_path / "project"
    markers.mkdir()
    project.mkdir()
    root.mkdir()
    (project / "pip.py").write_text(
        f"import os\nos.close(os.open({str(markers / 'pip')!r}, os.O_CREAT | os.O_WRONLY))\n")
    no_uv = environ | {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    done = subprocess.run([str(CONSOLE_SCRIPT), "plugins", "install", "pip:./no-such-package"],
                          env=no_uv, cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "pip install ./no-such-package failed" in done.stderr, \
        done.stderr
    assert list(markers.iterdir()) == []
