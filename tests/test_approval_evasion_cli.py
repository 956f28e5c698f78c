"""Approval evasion (issue 25, point 15) through the real CLI against the fake LLM:
deletes that land on the home however they are spelled never run, even with
``--yolo``; a script the same line wrote, and commands run through programs that are
no shell, are refused where nobody can approve them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall
from nobody_support import nobody_prefix
from sandbox_support import outside  # noqa: F401  (a fixture)
from test_sandbox_profile import as_nobody


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


UNCONFINED = "environment.local.sandbox.mode=off"
"""The approval check is the only guard: the sandbox would refuse some of these too."""


def run_once(hermes_subprocess, llm: FakeLLM, command: str, *settings: str) -> dict[str, str]:
    """A one-shot whose model asks the terminal for ``command`` (unconfined); the tool's
    result."""
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": command})]), Reply(text="done"))
    proc = hermes_subprocess("chat", "-q", "clean up", UNCONFINED, *settings)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, str] = json.loads(str(llm.requests[-1].tool_results[0].content))
    return result


@pytest.fixture
def home_files(user_home: Path) -> Path:
    """Files in the temporary home that a delete of the home would take."""
    (user_home / "notes").mkdir()
    (user_home / "notes" / "keep.txt").write_text("still here")
    return user_home / "notes" / "keep.txt"


def test_the_same_sandbox_lets_a_yolo_delete_in_the_home_run(
        hermes_subprocess, llm: FakeLLM, tmp_path: Path, user_home: Path,
        home_files: Path) -> None:
    """The control: unconfined, an approvable delete in the home runs under --yolo, so
    the refusals below are the approval check's doing."""
    (user_home / "victim").mkdir()
    result = run_once(hermes_subprocess, llm, "cd ~ && rm -rf victim", "--yolo",
                      f"environment.cwd={tmp_path}")
    assert "error" not in result, result
    assert not (user_home / "victim").exists() and home_files.exists()


@pytest.mark.parametrize("command", [
    "cd ~ && rm -rf .",
    "cd ~ && rm -rf ./*",
    "cd && rm -rf notes *",
    "rm -rf ~/../us?r",  # a glob that matches the home
    "rm -rf ~/notes/../",
    "cd ~/notes && rm -rf ..",
    "awk 'BEGIN { system(\"rm -rf \" ENVIRON[\"HOME\"] \"/notes\"); system(\"rm -rf ~\") }'",
    "echo 'rm -rf ~' > wipe.sh; sh wipe.sh",
])
def test_deletes_of_the_home_are_refused_even_with_yolo(
        hermes_subprocess, llm: FakeLLM, tmp_path: Path, home_files: Path,
        command: str) -> None:
    result = run_once(hermes_subprocess, llm, command, "--yolo", f"environment.cwd={tmp_path}")
    assert "output" not in result, result
    assert "blocked command" in result["error"] and "never be approved" in result["error"]
    assert "home directory" in result["error"], result
    assert home_files.read_text() == "still here"
    assert not (tmp_path / "wipe.sh").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run as nobody")
def test_as_an_ordinary_user_the_home_is_kept_too(llm: FakeLLM, outside: Path) -> None:  # noqa: F811
    workspace, environ = as_nobody(outside, llm)
    kept = outside / "user" / "notes" / "keep.txt"
    kept.parent.mkdir()
    kept.write_text("still here")
    os.chown(kept.parent, 65534, 65534)
    os.chown(kept, 65534, 65534)
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "cd ~ && rm -rf *"})]),
             Reply(text="done"))
    proc = subprocess.run(
        [*nobody_prefix(), sys.executable, "-m", "hermes", "-p", "demo", "chat", "-q",
         "clean up", "--yolo", UNCONFINED, f"environment.cwd={workspace}"],
        env=environ, capture_output=True, text=True, timeout=120, check=False, cwd="/")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(str(llm.requests[-1].tool_results[0].content))
    assert "blocked command" in result.get("error", ""), result
    assert kept.read_text() == "still here"


def test_deletes_of_the_home_are_refused_with_approvals_off(
        hermes_subprocess, llm: FakeLLM, tmp_path: Path, home_files: Path) -> None:
    result = run_once(hermes_subprocess, llm, "cd ~ && rm -rf .", "approvals.mode=off",
                      f"environment.cwd={tmp_path}")
    assert "blocked command" in result.get("error", ""), result
    assert home_files.read_text() == "still here"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (project / "build" / "app.o").write_text("object")
    return project


@pytest.mark.parametrize(("command", "why"), [
    ("echo cm0gLXJmIGJ1aWxkCg== | base64 -d > x.sh; sh x.sh", "this line wrote"),
    ("awk 'BEGIN{system(\"rm -rf build\")}'", "awk system()"),
    ("vim -es -c '!rm -rf build' -c q", "vim"),
    ("echo rm -rf build > x.sh; . ./x.sh", "recursive delete of build"),
])
def test_a_oneshot_that_cannot_ask_refuses_scripts_it_cannot_see_through(
        hermes_subprocess, llm: FakeLLM, project: Path, command: str, why: str) -> None:
    result = run_once(hermes_subprocess, llm, command, "approvals.mode=manual",
                      f"environment.cwd={project}")
    assert "output" not in result, result
    assert "needs the user's approval" in result["error"] and why in result["error"], result
    assert (project / "build" / "app.o").read_text() == "object"
    assert not (project / "x.sh").exists()


def test_replacing_a_projects_config_yaml_asks_but_sed_in_place_runs(
        hermes_subprocess, llm: FakeLLM, project: Path) -> None:
    config = project / "deploy" / "config.yaml"
    config.parent.mkdir()
    config.write_text("mode: dev\n")
    cwd = f"environment.cwd={project}"
    result = run_once(hermes_subprocess, llm, "echo mode: prod > deploy/config.yaml",
                      "approvals.mode=manual", cwd)
    assert "config.yaml" in result.get("error", ""), result
    assert config.read_text() == "mode: dev\n"
    result = run_once(hermes_subprocess, llm, "sed -i 's/dev/prod/' deploy/config.yaml",
                      "approvals.mode=manual", cwd)
    assert "error" not in result, result
    assert config.read_text() == "mode: prod\n"
