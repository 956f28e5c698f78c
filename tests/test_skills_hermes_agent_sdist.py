"""hermes-agent 0.19.0's own skills, from its published sdist (fetched from PyPI's simple
index in the test, its sha256 checked; skipped with a reason offline), installed through
the real CLI into one fresh home: its ``skills/``, then its ``optional-skills/`` (issue 27).

Counted on Linux: 148 install, 4 are skipped as macOS-only, 25 are refused each with a
scan finding (none as malformed or not installable); ``skills list`` shows every one
installed; with ``--force`` the 25 install too."""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import ssl
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import ok, stop_servers
from hermes.cli.app import CliState
from hermes.cli.main import build_app
from hermes.skills.discovery import skill_dirs
from hermes.skills.format import parse_skill_text

INDEX = "https://pypi.org/simple/hermes-agent/"
SDIST = "hermes_agent-0.19.0.tar.gz"
SHA256 = "ac986bede64a2785436676c0ea084ec586574f8cb00a9d047e095b435d3e21c0"
TREES = ("skills", "optional-skills")
MACOS_ONLY = {"apple-notes", "apple-reminders", "findmy", "imessage"}
INSTALLED, FLAGGED = 148, 25
FLAGGED_LINE = re.compile(r"^the scan found problems in (\S+) \(listed above\) — pass "
                          r"--force to install it anyway$")
LAST_PART = re.compile(r"^installed the other \d+ skills?$")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="counted on Linux (its "
                                "macOS-only skills install elsewhere)")


def fetch(url: str) -> bytes:
    """``url``'s body, trusting ``SSL_CERT_FILE`` or the system's bundle (a proxy that
    intercepts TLS signs with a certificate only that bundle holds)."""
    bundle = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    context = ssl.create_default_context(cafile=bundle if Path(bundle).is_file() else None)
    with urllib.request.urlopen(url, timeout=60, context=context) as response:
        return bytes(response.read())


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist's top directory holding only its ``skills/`` and ``optional-skills/``."""
    try:
        index = fetch(INDEX).decode()
        link = re.search(rf'href="([^"]*{re.escape(SDIST)}#sha256=([0-9a-f]{{64}}))"', index)
        assert link is not None, f"{INDEX} lists no {SDIST}"
        assert link[2] == SHA256, f"{INDEX} gives {SDIST} another sha256: {link[2]}"
        data = fetch(urllib.parse.urljoin(INDEX, link[1].split("#")[0]))
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"cannot fetch {SDIST} from {INDEX} (offline?): {exc}")
    assert hashlib.sha256(data).hexdigest() == SHA256, f"{SDIST}: sha256 differs from the index's"
    where = tmp_path_factory.mktemp("hermes-agent-sdist")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(where, [m for m in archive.getmembers()
                                   if m.name.split("/")[1:2] in ([t] for t in TREES)],
                           filter="data")
    [top] = where.iterdir()
    return top


@dataclass
class Home:
    """One fresh home, the CLI run in-process in it."""

    root: Path
    run: Callable[..., Any]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory):
    user = tmp_path_factory.mktemp("user")
    env = {"HOME": str(user), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8",
           "HERMES_NO_DAEMON": "1"}

    def run(*args: str) -> Any:
        return CliRunner().invoke(build_app(), list(args), obj=CliState(None, env), env=env,
                                  catch_exceptions=False)

    yield Home(user / ".hermes", run)
    stop_servers(user)


@dataclass
class Outcome:
    installed: set[str]
    skipped: set[str]
    flagged: set[str]
    other_refusals: list[str]
    malformed: list[str]


def install(home: Home, source: Path, *flags: str) -> Outcome:
    """``hermes skills install SOURCE --yes`` and what became of each skill."""
    done = home.run("skills", "install", str(source), "--yes", *flags)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    parts = done.stderr.strip().removeprefix("error: ").split("; ") if done.stderr else []
    flagged = [m[1] for m in map(FLAGGED_LINE.match, parts) if m]
    return Outcome(
        installed={line.split()[1] for line in lines if line.startswith("installed ")},
        skipped={line.split()[1].rstrip(":") for line in lines
                 if ": skipped: only for macos" in line},
        flagged=set(flagged),
        other_refusals=[p for p in parts if not FLAGGED_LINE.match(p) and not LAST_PART.match(p)],
        malformed=[line for line in lines if line.lstrip().startswith("✗")])


@pytest.fixture(scope="module")
def first(home: Home, sdist: Path) -> Outcome:
    return install(home, sdist / "skills")


@pytest.fixture(scope="module")
def second(home: Home, sdist: Path, first: Outcome) -> Outcome:
    return install(home, sdist / "optional-skills")


def test_hermes_agent_s_skills_install_but_the_macos_and_the_flagged_ones(
        first: Outcome) -> None:
    assert first.skipped == MACOS_ONLY
    assert not first.other_refusals and not first.malformed
    assert first.installed and first.flagged and not first.installed & first.flagged


def test_then_its_optional_skills_and_the_counts(first: Outcome, second: Outcome) -> None:
    assert not second.skipped and not second.other_refusals and not second.malformed
    assert not (first.installed | first.flagged) & (second.installed | second.flagged)
    print(f"\nskills/: {len(first.installed)} installed, {len(first.skipped)} macOS-only, "
          f"{len(first.flagged)} flagged; optional-skills/: {len(second.installed)} "
          f"installed, {len(second.flagged)} flagged")
    assert len(first.installed | second.installed) == INSTALLED
    assert len(first.flagged | second.flagged) == FLAGGED


def test_skills_list_shows_every_installed_one(home: Home, first: Outcome,
                                               second: Outcome) -> None:
    done = home.run("skills", "list")
    table = ok(done).split("\n\n")[0].splitlines()[1:]
    listed = {cells[0] for cells in map(str.split, table) if cells[2] == "installed"}
    assert listed == first.installed | second.installed and done.stderr == ""


def test_with_force_the_flagged_ones_install_too(home: Home, sdist: Path, first: Outcome,
                                                 second: Outcome, tmp_path: Path) -> None:
    flagged = first.flagged | second.flagged
    forced = tmp_path / "flagged"
    for tree in TREES:  # each under its category, as it was
        for _, directory, _ in skill_dirs(sdist / tree):
            text = (Path(directory) / "SKILL.md").read_text(encoding="utf-8")
            if parse_skill_text(text, directory, [])[0].name in flagged:
                shutil.copytree(directory, forced / Path(directory).relative_to(sdist / tree))
    outcome = install(home, forced, "--force")
    assert outcome.installed == flagged and not outcome.other_refusals
    done = home.run("skills", "list")
    assert sum(" installed " in line for line in ok(done).splitlines()) == INSTALLED + FLAGGED
