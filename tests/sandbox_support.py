"""Helpers for the sandbox tests: the backends that work on this machine (one test per
backend), a second profile to attack, and running the CLI where no sandbox can work."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM
from hermes.environments.sandbox.bubblewrap import Bubblewrap
from hermes.environments.sandbox.landlock import Landlock
from hermes.environments.sandbox.seccomp import (
    RET_ALLOW,
    RET_ERRNO,
    SockFilter,
    SockFprog,
    native_arch,
)

WORK_SECRET = "work-secret-4b1d9e"
DEMO_SECRET = "demo-secret-77c0aa"
SSH_SECRET = "ssh-private-key-90fe12"
MOUNT = {"x86_64": 165, "aarch64": 40}
LANDLOCK_CREATE_RULESET = 444


def _problem(name: str) -> str | None:
    backend = Bubblewrap(os.environ) if name == "bubblewrap" else Landlock(os.environ)
    return backend.problem()


def backends() -> list[Any]:
    """``bubblewrap`` and ``landlock`` as parameters, each skipped with the reason when it
    cannot work here; on CI (``CI`` set) bubblewrap is never skipped (.ci/run installs it)."""
    params = []
    for name in ("bubblewrap", "landlock"):
        problem = _problem(name)
        skip = problem is not None and not (name == "bubblewrap" and os.environ.get("CI"))
        params.append(pytest.param(name, id=name, marks=pytest.mark.skipif(
            skip, reason=f"{name} does not work here: {problem}")))
    return params


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def demo(root: Path, llm: FakeLLM) -> Path:
    """Profile ``demo`` (the one the agent runs as), with a secret of its own."""
    home = root / "profiles" / "demo"
    write_fake_provider(home, llm.openai_base_url)
    with (home / ".env").open("a") as env:
        env.write(f"# {DEMO_SECRET}\n")
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (bubblewrap's /tmp is private)."""
    path = Path(tempfile.mkdtemp(prefix="hermes-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def make_work_profile(root: Path) -> dict[Path, bytes]:
    """Profile ``work`` with a secret, an identity, a memory and a sessions database; the
    bytes of each file, to compare after an attack."""
    home = root / "profiles" / "work"
    (home / "memories").mkdir(parents=True)
    (home / ".env").write_text(f"OPENAI_API_KEY=sk-{WORK_SECRET}\n# {WORK_SECRET}\n")
    (home / ".env").chmod(0o600)
    (home / "SOUL.md").write_text("You are the work assistant.\n")
    (home / "memories" / "MEMORY.md").write_text("The user works at Example Corp.\n")
    with sqlite3.connect(home / "state.db") as db:
        db.execute("create table secrets (value text)")
        db.execute("insert into secrets values (?)", (WORK_SECRET,))
    db.close()
    return {path: path.read_bytes() for path in home.rglob("*") if path.is_file()}


def make_ssh_key(user_home: Path) -> Path:
    key = user_home / ".ssh" / "id_ed25519"
    key.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_SECRET}\n")
    key.chmod(0o600)
    return key


def no_sandbox_works() -> Callable[[], None]:
    """A ``preexec_fn`` for the CLI's process: a seccomp filter under which neither
    backend can start (mount(2) fails, so bwrap cannot set up its namespace; Landlock
    reports no ABI), as on a machine without either."""
    arch = native_arch()
    if arch is None or platform.machine() not in MOUNT:
        pytest.skip(f"no seccomp numbers for {platform.machine()}")
    code = [(0x20, 0, 0, 4), (0x15, 1, 0, arch.audit), (0x06, 0, 0, RET_ALLOW),
            (0x20, 0, 0, 0),
            (0x15, 0, 1, LANDLOCK_CREATE_RULESET), (0x06, 0, 0, RET_ERRNO | errno.ENOSYS),
            (0x15, 0, 1, MOUNT[platform.machine()]), (0x06, 0, 0, RET_ERRNO | errno.EPERM),
            (0x06, 0, 0, RET_ALLOW)]
    filters = (SockFilter * len(code))(*(SockFilter(*item) for item in code))
    program = SockFprog(len(code), filters)
    libc = ctypes.CDLL(None, use_errno=True)

    def apply() -> None:
        assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
        assert libc.prctl(22, 2, ctypes.byref(program), 0, 0) == 0  # PR_SET_SECCOMP

    apply.keep = (filters, program)  # type: ignore[attr-defined]
    return apply
