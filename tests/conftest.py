"""Shared fixtures: every test gets its own temporary user home and Hermes root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chromium_support import chromium  # noqa: F401 E402 — the fixture, for every module that drives Chromium
from dashboard_support import page  # noqa: F401 E402 — the fixture: a logged-in page of a module's dashboard
from fake_provider import write_fake_provider  # noqa: F401 — tests import it from here
from hermes.cli.app import CliState
from hermes.cli.main import build_app, expand_oneshot, split_profile_flag

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the programs the tests start: a suite launched in the background of a
    shell without job control (``.ci/run &``, ``nohup``) inherits SIGINT ignored, every
    child would inherit that too (an ignored signal survives exec), and the tests that
    press Ctrl-C in a chat, a run or a delegation would fail for the launcher's sake.

    Hypothesis checks what the examples do, not how fast: its 200 ms deadline per example
    failed fuzz tests on a machine busy with the suite's other worker."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    from hypothesis import settings

    settings.register_profile("hermes", deadline=None)
    settings.load_profile("hermes")


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """A fresh ``$HOME``; the Hermes root is ``<user_home>/.hermes``."""
    home = tmp_path / "user"
    home.mkdir()
    return home


@pytest.fixture
def root(user_home: Path) -> Path:
    return user_home / ".hermes"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked ``both_modes`` run twice: in-process and through the warm server."""
    if metafunc.definition.get_closest_marker("both_modes"):
        metafunc.parametrize("cli_mode", ["in-process", "daemon"], indirect=True)


@pytest.fixture
def cli_mode(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "in-process")


@pytest.fixture
def environ(user_home: Path, cli_mode: str) -> Iterator[dict[str, str]]:
    """A clean environment for one test: only PATH, HOME and locale. Chat commands run
    in-process unless the test runs ``both_modes``; servers it started are stopped."""
    env = {"HOME": str(user_home), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    if cli_mode == "in-process":
        env["HERMES_NO_DAEMON"] = "1"
    yield env
    stop_servers(user_home)


def stop_servers(user_home: Path) -> None:
    """SIGTERM every hermes server under ``user_home`` and wait for it to go."""
    import signal
    import time

    for pid_file in user_home.glob("**/run/daemon.pid"):
        try:
            pid = int(pid_file.read_text())
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            continue
        socket_file = pid_file.with_name("daemon.sock")  # removed as the server exits
        deadline = time.monotonic() + 30
        while socket_file.exists() and _running(pid) and time.monotonic() < deadline:
            time.sleep(0.02)


def _running(pid: int) -> bool:
    """False once ``pid`` is gone or a zombie: a server killed with its gateway's process
    group (SIGKILL) leaves its socket behind, and nobody may reap it for a while."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def wait_until(condition: Callable[[], object], timeout: float = 30.0,
               what: str = "the condition", interval: float = 0.05) -> object:
    """Poll ``condition`` until it returns something truthy (returned); fail naming
    ``what`` after ``timeout`` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(interval)
    return value


Invoke = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def hermes(environ: dict[str, str]) -> Callable[..., object]:
    """Run the real CLI in-process with Typer's CliRunner: ``hermes("profile", "list")``.

    Accepts ``env={...}`` to add variables and ``input="..."`` for prompts.
    """

    def invoke(*args: str, env: dict[str, str] | None = None, input: str | None = None):
        full_env = environ | (env or {})
        profile, rest = split_profile_flag(list(args))
        runner = CliRunner()
        args = expand_oneshot(rest)
        return runner.invoke(build_app(), args, obj=CliState(profile, full_env),
                             input=input,
                             env=full_env, catch_exceptions=False)

    return invoke


@pytest.fixture
def hermes_subprocess(environ: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m hermes`` in a real subprocess with the test's environment."""

    def run(*args: str, env: dict[str, str] | None = None, input: str | None = None,
            cwd: Path | None = None):
        return subprocess.run([sys.executable, "-m", "hermes", *args], env=environ | (env or {}),
                              input=input, capture_output=True, text=True, timeout=120, cwd=cwd)

    return run


def ok(result) -> str:
    """Assert a CLI run succeeded; its stdout."""
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def refused(result, *fragments: str) -> str:
    """Assert a CLI run was refused: exit 2, one ``error:`` line holding every fragment."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line, line
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in line, line
    return line


@pytest.fixture(scope="session")
def docker_daemon(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A docker daemon that answers (started only on CI; see tests/docker_support.py)."""
    from docker_support import ensure_docker_daemon

    ensure_docker_daemon(tmp_path_factory.mktemp("dockerd"))


@pytest.fixture(scope="session")
def built_images(docker_daemon: None) -> Iterator[list[str]]:
    """Tags of the images this session builds: outside CI, removed when it ends."""
    from docker_support import remove_built_images

    built: list[str] = []
    yield built
    remove_built_images(built)


@pytest.fixture(scope="session")
def base_image(built_images: list[str]) -> str:
    """The debootstrapped Debian bookworm base image's tag."""
    from docker_support import ensure_base_image

    return ensure_base_image(built_images)


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A real Synapse homeserver on a loopback port (see tests/synapse_support.py)."""
    from synapse_support import start_synapse

    server = start_synapse(tmp_path_factory.mktemp("synapse"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mail_servers() -> Iterator[object]:
    """Dovecot (IMAP) and an SMTP server that delivers into it (tests/mail_support.py)."""
    from mail_support import start_mail_servers

    servers = start_mail_servers()
    yield servers
    servers.stop()


NEEDS = {"docker_daemon": "docker", "sshd": "sshd", "nixpkgs_lib": "nix",
         "synapse": "synapse", "mail_servers": "dovecot"}
"""Fixtures that need something of the machine, and the marker their tests get."""


DOCKER_MODULES = frozenset({"test_docker_support.py", "test_environment_docker.py",
                            "test_image.py", "test_image_dashboard.py"})
"""The test modules that use the docker daemon: pytest-xdist runs them in one worker (one
base image debootstrapped, one ``hermes:test`` built, no two builds of a tag at once)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by what they need (README, "Run the tests"): ``-m 'not docker'``."""
    for item in items:
        used = getattr(item, "fixturenames", ())
        for marker in {marker for fixture, marker in NEEDS.items() if fixture in used}:
            item.add_marker(marker)
        if item.path.name.startswith("test_nix"):
            item.add_marker("nix")
        docker = item.get_closest_marker("docker") or item.get_closest_marker("image")
        if docker and item.path.parent == HERE and item.path.name not in DOCKER_MODULES:
            raise pytest.UsageError(f"{item.nodeid} uses docker: add {item.path.name} to "
                                    "DOCKER_MODULES in tests/conftest.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's work units: a module's tests go to one worker (its module fixtures
    start once), the docker modules all to one. (xdist's own ``loadgroup`` names groups by
    renaming node ids, which pytest 9 no longer allows: it split modules.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "docker" if Path(module).name in DOCKER_MODULES else module

    return ByModule(config, log)
