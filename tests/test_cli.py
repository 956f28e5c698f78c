"""The CLI surface: help, typos, version, lazy heavy imports, doctor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("litellm", "docker", "sqlite_utils", "dependency_injector", "telegram", "uvicorn",
         "fastapi", "mautrix", "aiohttp", "aioimaplib", "aiosmtplib")


def test_help_lists_the_groups(hermes) -> None:
    result = hermes("--help")
    assert result.exit_code == 0
    for group in ("profile", "config", "doctor", "--profile"):
        assert group in result.stdout


@pytest.mark.parametrize("group", ["profile", "config"])
def test_every_command_has_help(hermes, group: str) -> None:
    listing = hermes(group, "--help").stdout
    commands = [line.split()[0] for line in listing.split("Commands:")[1].splitlines()
                if line.strip()]
    assert len(commands) >= 8
    for command in commands:
        result = hermes(group, command, "--help")
        assert result.exit_code == 0 and "Usage:" in result.stdout, command
        assert len(result.stdout.split("Usage:")[1].splitlines()) > 3


def test_unknown_command_suggests_the_closest(hermes) -> None:
    result = hermes("profle", "list")
    assert result.exit_code == 2 and "Did you mean 'profile'" in result.stderr
    result = hermes("config", "explian", "x")
    assert result.exit_code == 2 and "Did you mean 'explain'" in result.stderr


def test_profile_flag_without_name(hermes_subprocess) -> None:
    proc = hermes_subprocess("config", "show", "-p")
    assert proc.returncode == 2 and proc.stderr.strip() == "error: -p needs a profile name"


def test_version(hermes_subprocess) -> None:
    proc = hermes_subprocess("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("hermes 0.")


@pytest.mark.parametrize("argv", [["--version"], ["profile", "list"], ["config", "show"],
                                  ["config", "explain", "provider.model"], ["doctor"],
                                  ["curator", "status"], ["pairing", "list"],
                                  ["cron", "list"], ["cron", "add", "0 9 * * 1-5", "Hello"],
                                  ["cron", "pause", "nosuchjob"]])
def test_management_commands_never_import_heavy_libraries(argv: list[str], environ) -> None:
    code = (
        "import sys, json\n"
        "from hermes.cli.main import run\n"
        "try:\n"
        f"    run({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)
    loaded = json.loads(proc.stderr.strip().splitlines()[-1])
    assert loaded == [], f"{argv} imported {loaded}"


def test_doctor_reports_problems_with_fixes(hermes, root: Path) -> None:
    result = hermes("doctor")
    assert result.exit_code == 1  # no credentials yet
    assert "OPENAI_API_KEY is not set" in result.stdout
    assert "hermes config set OPENAI_API_KEY" in result.stdout
    assert hermes("config", "set", "OPENAI_API_KEY", "sk-doctor-test-123456").exit_code == 0
    root.chmod(0o700)
    result = hermes("doctor")
    assert "sk-doctor-test-123456" not in result.stdout
    lines = {line.split()[1]: line.split()[0] for line in result.stdout.splitlines()
             if line.strip().split(" ")[0] in ("ok", "warn", "fail")}
    assert lines["config"] == "ok" and lines["dependencies"] == "ok"
    (root / ".env").chmod(0o644)
    result = hermes("doctor")
    assert result.exit_code == 1 and f"chmod 600 {root / '.env'}" in result.stdout


def test_doctor_reports_bad_config(hermes, root: Path) -> None:
    root.mkdir(parents=True)
    (root / "config.yaml").write_text("agent:\n  max_iterations: lots\n")
    result = hermes("doctor")
    assert result.exit_code == 1 and "fail" in result.stdout and "max_iterations" in result.stdout


@pytest.mark.parametrize(("args", "fragments"), [
    (["--bogus"], ["No such option: --bogus", "(see `hermes -h`)"]),
    (["profile", "lst"], ["No such command 'lst'", "Did you mean 'list'?",
                          "(see `hermes profile -h`)"]),
    (["sessions", "list", "--limit", "abc"], ["'--limit'", "'abc' is not a valid",
                                              "(see `hermes sessions list -h`)"]),
    (["sessions", "show"], ["Missing argument 'ID'", "(see `hermes sessions show -h`)"]),
])
def test_usage_errors_are_one_line(hermes_subprocess, args: list[str],
                                   fragments: list[str]) -> None:
    """Click's usage block (Usage:, Try ..., Error:) is one `error:` line, exit code 2."""
    result = hermes_subprocess(*args)
    line = result.stderr.strip()
    assert result.returncode == 2 and line.startswith("error: ") and "\n" not in line, line
    for fragment in fragments:
        assert fragment in line, line


def test_a_bare_group_still_shows_its_help(hermes_subprocess) -> None:
    result = hermes_subprocess("profile")
    assert "Usage: hermes profile" in result.stdout + result.stderr
    assert "error:" not in result.stderr
