"""Approvals as a user meets them: a one-shot refusing a recursive delete, and
`hermes approvals list | revoke | clear`."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Reply, ToolCall


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def oneshot_refusal(hermes_subprocess, llm: FakeLLM, command: str) -> str:
    """Run `hermes -z` (approvals manual, nobody to ask) with the model asking the
    terminal for ``command`` once; the refusal it printed."""
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": command})]),
             Reply(text="I could not do it."))
    proc = hermes_subprocess("-z", "do it", "approvals.mode=manual")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "I could not do it.\n"
    assert "refused" in str(llm.requests[-1].tool_results[0].content)
    refusals = [line for line in proc.stderr.splitlines() if "refused:" in line]
    assert refusals, proc.stderr
    return refusals[0]


@pytest.mark.parametrize(("command", "why"), [
    ("rm -rf {victim}", "recursive delete"),
    ("$(echo rm) -rf {victim}", "computed"),  # the program's name computed: its own class
])
def test_oneshot_refuses_rm_rf_and_says_why(hermes_subprocess, llm: FakeLLM, tmp_path: Path,
                                            command: str, why: str) -> None:
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    refusal = oneshot_refusal(hermes_subprocess, llm, command.format(victim=victim))
    assert (victim / "sub").is_dir()
    assert why in refusal and "recursive delete" in refusal and "approval" in refusal


@pytest.mark.parametrize("change", ["chmod u+s {f}", "chmod 4755 {f}", "chown root {f}"])
def test_oneshot_refuses_setuid_bits_and_root_ownership(hermes_subprocess, llm: FakeLLM,
                                                        tmp_path: Path, change: str) -> None:
    tool = tmp_path / "tool"
    tool.write_bytes(b"#!/bin/sh\n")
    tool.chmod(0o755)
    marker = tmp_path / "changed"
    refusal = oneshot_refusal(hermes_subprocess, llm, change.format(f=tool) + f" && touch {marker}")
    assert not marker.exists() and stat.S_IMODE(tool.stat().st_mode) == 0o755
    assert "setuid" in refusal or "root" in refusal


def test_a_computed_command_with_hard_blocked_arguments_is_refused_even_with_mode_off(
        hermes_subprocess, llm: FakeLLM) -> None:
    """Whatever the program turns out to be, `-rf /` after a computed name never runs
    (the program here is a harmless echo, so a regression shows as output, not damage)."""
    llm.push(Reply(tool_calls=[ToolCall("terminal",
                                        {"command": "$(echo echo) MARKER-RAN -rf /"})]),
             Reply(text="done"))
    proc = hermes_subprocess("-z", "run it", "approvals.mode=off")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(str(llm.requests[-1].tool_results[0].content))
    assert "output" not in result, result  # `echo MARKER-RAN -rf /` did not run
    assert "blocked command" in result["error"] and "never be approved" in result["error"]
    assert any("refused:" in line for line in proc.stderr.splitlines())


@pytest.mark.parametrize(("command", "what"), [
    ("rm -rf ~", "a home directory (~)"),
    ('rm -fr "$HOME"/*', "a home directory ($HOME/*)"),
    ("rm -ri /etc </dev/null", "the system directory /etc"),  # -i: a regression asks, and
    ("rm -r -i /usr/lib/../ </dev/null", "the system directory /usr"),  # gets "no"
])
def test_deleting_the_home_or_a_system_directory_is_refused_even_with_mode_off(
        hermes_subprocess, llm: FakeLLM, user_home: Path, command: str, what: str) -> None:
    kept = user_home / "keep.txt"
    kept.write_text("still here")
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": command})]), Reply(text="done"))
    proc = hermes_subprocess("-z", "clean up", "approvals.mode=off")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(str(llm.requests[-1].tool_results[0].content))
    assert "output" not in result, result
    assert "blocked command" in result["error"] and "never be approved" in result["error"]
    assert f"recursive delete of {what}" in result["error"], result
    assert kept.read_text() == "still here"


def test_oneshot_with_yolo_runs_it(hermes_subprocess, llm: FakeLLM, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {victim}"})]),
             Reply(text="gone"))
    # The victim is in the working directory: the sandbox lets commands write only there.
    proc = hermes_subprocess("chat", "-q", "delete it", "--yolo", f"environment.cwd={tmp_path}")
    assert proc.returncode == 0 and not victim.exists() and "refused" not in proc.stderr


def test_approvals_mode_off_in_config_runs_flagged_commands(
        hermes_subprocess, llm: FakeLLM, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -r {victim}"})]),
             Reply(text="gone"))
    proc = hermes_subprocess("-z", "delete it", "approvals.mode=off", f"environment.cwd={tmp_path}")
    assert proc.returncode == 0, proc.stderr
    assert not victim.exists()


def test_unquoted_off_in_yaml_means_off(hermes, root: Path, environ: dict[str, str]) -> None:
    from hermes.config import compose_config
    from hermes.home import resolve_home

    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text("approvals:\n  mode: off\n")  # YAML 1.1: false
    ok(hermes("config", "validate"))
    assert compose_config(resolve_home(None, environ), environ).config.approvals.mode == "off"
    refused(hermes("config", "validate", "approvals.mode=sometimes"), "approvals.mode")


def write_allowlist(root: Path, *keys: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "approvals.json"
    path.write_text(json.dumps({"always": list(keys)}))
    return path


def test_list_shows_each_class_and_what_it_covers(hermes, root: Path) -> None:
    assert "no command class is approved" in ok(hermes("approvals", "list"))
    write_allowlist(root, "chmod_777", "recursive_delete")
    listing = ok(hermes("approvals", "list"))
    assert "chmod_777" in listing and "world-writable" in listing
    assert "recursive_delete" in listing and "rm -r" in listing


def test_revoke_removes_only_that_class(hermes, root: Path) -> None:
    path = write_allowlist(root, "chmod_777", "recursive_delete")
    assert "revoked chmod_777" in ok(hermes("approvals", "revoke", "chmod_777"))
    assert [e["key"] for e in json.loads(path.read_text())["always"]] == ["recursive_delete"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    before = path.read_text()
    refused(hermes("approvals", "revoke", "chmod_777"), "chmod_777 not approved",
            "recursive_delete")
    assert path.read_text() == before


def test_clear_revokes_everything(hermes, root: Path) -> None:
    path = write_allowlist(root, "chmod_777", "git_force_push")
    assert "cleared 2" in ok(hermes("approvals", "clear"))
    assert json.loads(path.read_text()) == {"always": []}


def test_approvals_are_per_profile(hermes, root: Path) -> None:
    write_allowlist(root, "chmod_777")
    ok(hermes("profile", "create", "work"))
    assert "no command class" in ok(hermes("-p", "work", "approvals", "list"))
