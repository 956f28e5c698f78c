"""Hints name the profile the user ran with: a `hermes ...` printed for the user to run
carries `-p NAME` when the profile is not the default, and works as written."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM
from fakellm.by_model import held_while


@pytest.fixture
def held() -> Iterator[tuple[FakeLLM, threading.Event]]:
    """A fake LLM that holds every question containing "slow" until the event is set."""
    release = threading.Event()
    with FakeLLM(fallback=held_while("slow", release, "The answer is 4."), strict=False) as llm:
        try:
            yield llm, release
        finally:
            release.set()


@pytest.fixture
def demo(root: Path, held: tuple[FakeLLM, threading.Event]) -> Path:
    home = root / "profiles" / "demo"
    write_fake_provider(home, held[0].openai_base_url)
    return home


def hint(text: str, words: str) -> str:
    """The backquoted command in ``text`` that holds ``words``."""
    found = [c for c in re.findall(r"`(hermes [^`]+)`", text) if words in c]
    assert found, f"no `hermes … {words} …` hint in {text!r}"
    return found[0]


def run_hint(command: str, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a printed ``hermes …`` command as written (the console script is ``-m hermes``)."""
    words = shlex.split(command)
    assert words[0] == "hermes"
    return subprocess.run([sys.executable, "-m", "hermes", *words[1:]], env=environ, text=True,
                          capture_output=True, timeout=180)


def test_an_interrupted_experiment_says_how_to_resume_it_in_its_profile(
        environ, demo: Path, held: tuple[FakeLLM, threading.Event]) -> None:
    llm, release = held
    proc = subprocess.Popen([sys.executable, "-m", "hermes", "-p", "demo", "ab",
                             "provider.model=gpt-4o,gpt-4o-mini", "-q", "slow: what is 2+2?"],
                            env=environ, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    llm.wait_for_requests(1, timeout=120)
    proc.send_signal(signal.SIGINT)
    release.set()
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    resume = hint(err, "ab resume")
    eid = resume.split()[-1]
    assert resume == f"hermes -p demo ab resume {eid}"
    resumed = run_hint(resume, environ)
    assert resumed.returncode == 0, resumed.stderr
    assert "2 of 2 runs done" in resumed.stdout
    report = run_hint(hint(resumed.stderr, "ab report"), environ)
    assert report.returncode == 0 and report.stdout.strip() == \
        str(demo / "experiments" / eid / "report.html")
    shown = run_hint(f"hermes -p demo ab show {eid} --runs", environ).stdout
    session = re.search(r"session (\S+)", shown.split("transcripts:")[0])
    assert session is not None
    transcript = hint(shown, "sessions show").replace("SESSION", session.group(1))
    assert transcript == f"hermes -p demo sessions show {session.group(1)}"
    opened = run_hint(transcript, environ)
    assert opened.returncode == 0 and "slow: what is 2+2?" in opened.stdout


def test_a_dead_warm_server_says_how_to_continue_in_its_profile(
        environ, demo: Path, held: tuple[FakeLLM, threading.Event]) -> None:
    llm, _release = held
    daemon_env = {k: v for k, v in environ.items() if k != "HERMES_NO_DAEMON"}
    warm = run_hint("hermes -p demo -z 'warm up'", daemon_env)
    assert warm.returncode == 0, warm.stderr
    server = int((demo / "run" / "daemon.pid").read_text())
    client = subprocess.Popen([sys.executable, "-m", "hermes", "-p", "demo", "-z", "slow one"],
                              env=daemon_env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    llm.wait_for_requests(2, timeout=60)
    for task in Path(f"/proc/{server}/task").iterdir():  # the child running the command
        for child in (task / "children").read_text().split():
            os.kill(int(child), signal.SIGKILL)
    _out, err = client.communicate(timeout=60)
    assert client.returncode == 1, err
    assert hint(err, "--continue") == "hermes -p demo chat --continue"
    listing = run_hint("hermes -p demo sessions list", environ | {"HERMES_NO_DAEMON": "1"})
    assert "slow one" in listing.stdout


def test_errors_and_notes_name_the_profile(hermes, root: Path, demo: Path) -> None:
    (demo / ".env").unlink()
    (root / "config.yaml").write_text("agent:\n  max_iterations: 5\n")
    assert hint(refused(hermes("-p", "demo", "ab", "show", "nope")), "ab list") == \
        "hermes -p demo ab list"
    assert hint(refused(hermes("ab", "show", "nope")), "ab list") == "hermes ab list"
    missing = refused(hermes("-p", "demo", "-z", "hi"))
    assert hint(missing, "config set") == "hermes -p demo config set CUSTOM_API_KEY YOUR_KEY"
    assert hint(refused(hermes("-z", "hi")), "config set") == \
        "hermes config set OPENAI_API_KEY YOUR_KEY"
    doctor = hermes("-p", "demo", "doctor", "--offline")
    assert doctor.exit_code == 1
    assert "hermes -p demo config set CUSTOM_API_KEY <your key>" in doctor.stdout
    (demo / "config.yaml").write_text("provider:\n  model: ''\n")
    assert hint(refused(hermes("-p", "demo", "config", "show")), "config set") == \
        "hermes -p demo config set provider.model VALUE"
    listing = ok(hermes("-p", "demo", "ab", "list"))
    assert hint(listing, "ab provider.model").startswith("hermes -p demo ab ")


def test_hints_of_commands_of_one_profile_get_the_flag_and_nothing_else_does() -> None:
    from hermes.hints import for_profile

    assert for_profile("run `hermes chat --continue`, then hermes doctor", "demo") == \
        "run `hermes -p demo chat --continue`, then hermes -p demo doctor"
    for text in ("the hermes server stopped", "`hermes profile create demo`",
                 "`hermes -p work config edit`", "hermes gateway: serving demo",
                 "/usr/bin/hermes chat", "hermes-agent chat"):
        assert for_profile(text, "demo") == text
    assert for_profile("`hermes chat`", "default") == "`hermes chat`"
    assert for_profile("`hermes chat`", "default", always=True) == "`hermes -p default chat`"
