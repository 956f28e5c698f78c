"""``Sandbox``: how one runtime starts its local commands, confined by its own profile.

The backend is chosen once per runtime, at its first command (``auto``: bubblewrap
when it works here, else Landlock, else unconfined, and said so); each command's
policy is built from the runtime's home, settings and environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.config.schema import SandboxSettings
from hermes.environments.sandbox.access import FileAccess
from hermes.environments.sandbox.base import Backend
from hermes.environments.sandbox.mounts import Mount, read_mounts
from hermes.environments.sandbox.policy import (
    SETTING,
    TMP,
    Resolutions,
    Resolve,
    SandboxPolicy,
    build_policy,
    unchanged,
    unreadable,
    user_home,
)
from hermes.errors import SandboxError, SandboxUnavailable
from hermes.home import Home

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt install bubblewrap; NixOS: "
                "pkgs.bubblewrap) or use Linux ≥ 5.13 with Landlock")
DENIED = re.compile(r"permission denied|read-only file system|operation not permitted",
                    re.IGNORECASE)
CACHED_POLICIES = 32
SESSION_TMPS = 64
"""Sessions whose /tmp a runtime keeps (a gateway serves many; a one-shot one): the
least recently used one beyond goes, and all go when the runtime closes."""
NO_NETWORK = re.compile(r"network is unreachable|connection refused|resolv|name or service "
                        r"not known|could not connect", re.IGNORECASE)


@dataclass(frozen=True)
class Choice:
    """The backend commands run under, or None (unconfined) and why."""

    backend: Backend | None
    detail: str
    error: str | None = None
    """Set when the configured backend does not work: commands fail with it."""

    @property
    def name(self) -> str:
        return self.backend.name if self.backend else "none"


def candidates(settings: SandboxSettings, environ: Mapping[str, str]) -> list[Backend]:
    from hermes.environments.sandbox.bubblewrap import Bubblewrap
    from hermes.environments.sandbox.landlock import Landlock

    wanted = ["bubblewrap", "landlock"] if settings.backend == "auto" else [settings.backend]
    made = {"bubblewrap": lambda: Bubblewrap(environ), "landlock": lambda: Landlock(environ)}
    return [made[name]() for name in wanted]


def choose(settings: SandboxSettings, environ: Mapping[str, str]) -> Choice:
    """The first backend that works here (probing each; call once per runtime)."""
    if settings.mode == "off":
        return Choice(None, f"{SETTING}.mode is off")
    problems: list[str] = []
    for backend in candidates(settings, environ):
        problem = backend.problem()
        if problem is None:
            how = "configured" if settings.backend != "auto" else "; ".join(
                ["auto", *(f"skipped {skipped}" for skipped in problems)])
            return Choice(backend, f"{backend.name} ({how})")
        problems.append(f"{backend.name}: {problem}")
    found = "; ".join(problems)
    if settings.backend != "auto":
        return Choice(None, found, error=f"{SETTING}.backend is {settings.backend}, which does "
                      f"not work here ({found}): {INSTALL_HINT}, or set {SETTING}.backend=auto")
    return Choice(None, f"no sandbox works here ({found})")


@dataclass(frozen=True)
class _Built:
    """A policy (or what else was cut from paths), and what it was cut from."""

    value: Any
    mounts: tuple[Mount, ...]
    stamps: tuple[tuple[Path, int, int], ...]


class Sandbox:
    """Starts one runtime's local commands under its sandbox settings."""

    def __init__(self, home: Home, settings: SandboxSettings, environ: Mapping[str, str],
                 secret_files: Sequence[Path] = ()):
        self.home = home
        self.settings = settings
        self.environ = environ
        self.secret_files = tuple(secret_files)
        """The profile's ``secrets.environment_files``: hidden like credential stores."""
        self._choice: Choice | None = None
        self._lock = threading.Lock()
        self._policies: dict[tuple[Any, ...], _Built] = {}
        """Built policies by working directory and /tmp, least recently used first."""
        self._tmp: dict[str, Path] = {}
        """Each session's own /tmp (bubblewrap), by session id, least recently used
        first."""

    def choice(self) -> Choice:
        with self._lock:
            if self._choice is None:
                self._choice = choose(self.settings, self.environ)
            return self._choice

    def policy(self, cwd: Path, session: str | None = None) -> SandboxPolicy:
        """The policy of a command of ``session`` (None: of no session) run in ``cwd``:
        the one built before while the mount table and every directory on the way to the
        paths it was cut from are unchanged (a file tool's check costs microseconds)."""
        tmp = self.tmp(session)
        policy: SandboxPolicy = self._kept((cwd, tmp), lambda resolve: build_policy(
            self.home, self.settings, cwd, self.environ, tmp, self.secret_files, resolve))
        return policy

    def _kept(self, key: tuple[Any, ...], build: Callable[[Resolve], Any]) -> Any:
        """``build(resolve)``, or what it built before while the mount table and every
        directory on the way to the paths it resolved are unchanged."""
        mounts = read_mounts()
        with self._lock:
            cached = self._policies.pop(key, None)
        if cached is not None and cached.mounts is mounts and unchanged(cached.stamps):
            built = cached
        else:
            resolutions = Resolutions()
            built = _Built(build(resolutions), mounts, resolutions.stamps())
        with self._lock:
            self._policies[key] = built
            for stale in list(self._policies)[:-CACHED_POLICIES]:
                del self._policies[stale]
        return built.value

    def tmp(self, session: str | None) -> Path | None:
        """What ``session``'s commands see as /tmp: under bubblewrap a directory of the
        session's own, which the file tools see there too (None without a session: an
        empty one per command); elsewhere the machine's."""
        backend = self.choice().backend
        if backend is None or not backend.private_tmp:
            return TMP
        if session is None:
            return None
        with self._lock:
            path = self._tmp.pop(session, None)
            if path is None or not path.is_dir():
                path = Path(tempfile.mkdtemp(prefix=f"hermes-{self.home.name}-tmp-")).resolve()
            self._tmp[session] = path
            stale = list(self._tmp)[:-SESSION_TMPS]
        for old in stale:
            self._drop_tmp(old)
        return path

    def _drop_tmp(self, session: str) -> None:
        with self._lock:
            path = self._tmp.pop(session, None)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)

    def file_access(self, cwd: Path, session: str | None,
                    results: Path | None = None) -> FileAccess:
        """What the file tools of ``session`` may read and write (the commands' policy;
        ``results``: the session's spilled tool results, readable too)."""
        policy = None if self.settings.mode == "off" else self.policy(cwd, session)
        stores: tuple[Path, ...] = self._kept(("credential stores",), lambda resolve: tuple(
            entry.path for entry in unreadable(self.settings, self.environ, resolve)))
        return FileAccess(self.home, user_home(self.environ), policy,
                          None if results is None else Path(os.path.realpath(results)),
                          stores)

    def popen(self, argv: Sequence[str], cwd: Path, session: str | None = None,
              **options: Any) -> subprocess.Popen[bytes]:
        """Start ``argv`` in ``cwd`` for ``session``, confined (``options`` as for
        ``Popen``)."""
        choice = self.choice()
        if choice.error:
            raise SandboxUnavailable(choice.error)
        if choice.backend is None:
            return subprocess.Popen(argv, cwd=cwd, **options)
        policy = self.policy(cwd, session)
        for path in policy.writable[1:]:  # allow_write entries are created when missing
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            return choice.backend.popen(argv, policy, cwd=cwd, **options)
        except subprocess.SubprocessError as exc:  # the child could not confine itself
            raise SandboxError(f"{choice.name} could not confine the command: {exc}") from exc

    def setup_failed(self, exit_code: int, output: str) -> bool:
        """Whether the sandbox itself failed before the command started (so it can be
        tried again without running anything twice)."""
        backend = self.choice().backend
        return backend is not None and backend.setup_failed(exit_code, output)

    def notice(self) -> str | None:
        """What the model is told once per session: commands run unconfined although
        the config asks for a sandbox."""
        choice = self.choice()
        if self.settings.mode == "off" or choice.backend is not None or choice.error:
            return None
        return f"commands run unconfined: {choice.detail}; to confine them, {INSTALL_HINT}"

    def failure_note(self, exit_code: int, output: str, cwd: Path) -> str | None:
        """For a failed command whose output says it was refused (or names a path the
        sandbox hides): which sandbox refused it and how the user widens it."""
        backend = self.choice().backend
        if exit_code == 0 or backend is None:
            return None
        denied = bool(DENIED.search(output))
        hints = []
        if denied or self._names_hidden(output, cwd):
            writes = ("nothing can be written" if self.settings.mode == "read-only"
                      else "writes go only to the working directory, /tmp and allow_write")
            hints.append(f"the Hermes root and credential stores cannot be read, {writes}; "
                         f"if the task needs more, ask the user to widen it, e.g. `hermes "
                         f"config set {SETTING}.allow_write '[~/.cache/pip]'` (`hermes "
                         f"sandbox explain` shows what is allowed)")
        if self.settings.network == "off" and (denied or NO_NETWORK.search(output)):
            hints.append(f"the network is off; to allow it, ask the user to run `hermes "
                         f"config set {SETTING}.network on`")
        if not hints:
            return None
        return (f"this ran in the local sandbox ({self.settings.mode}, {backend.name}): "
                + "; ".join(hints))

    def _names_hidden(self, output: str, cwd: Path) -> bool:
        """bubblewrap shows a hidden path as missing ("No such file or directory")."""
        try:
            hidden = self.policy(cwd).hidden_paths()
        except SandboxError:
            return False
        return any(str(path) in output for path in hidden)

    def close(self) -> None:
        choice = self._choice
        if choice is not None and choice.backend is not None:
            choice.backend.close()
        for session in list(self._tmp):
            self._drop_tmp(session)
