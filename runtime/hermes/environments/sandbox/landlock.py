"""Landlock (Linux ≥ 5.13; no namespaces, so it works in containers where bubblewrap
cannot): applied in the child between fork and exec, after ``PR_SET_NO_NEW_PRIVS``.

Landlock only grants, so a hidden path is left out by granting its siblings: from
``/`` down to each hidden path, every other entry of the directories on the way
gets read access (and, under the working directory, ``/tmp`` and ``allow_write``,
write access). Listing directories stays allowed everywhere (names, not contents).
A seccomp filter (``seccomp.py``) covers Unix sockets and, with ``network: off``,
every internet socket; Landlock's own TCP rules (ABI 4) back it up.

Rulesets are built in this process and kept while the directories they were cut
from are unchanged (their mtimes), so a command costs the fork and three system
calls; a new entry in such a directory makes the next command rebuild.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes.environments.sandbox import landlock_sys as sys_
from hermes.environments.sandbox.base import Backend
from hermes.environments.sandbox.launcher import find_perl, perl_command
from hermes.environments.sandbox.policy import SandboxPolicy, within
from hermes.environments.sandbox.seccomp import Program, families, native_arch

READ = sys_.EXECUTE | sys_.READ_FILE | sys_.READ_DIR
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
           "/dev/pts", "/dev/ptmx")
"""Writable in every mode: what shells and tools write to besides files. Not the host's
``/dev/shm``: other programs' shared memory lives there."""
CACHED_RULESETS = 8
PROBE_TIMEOUT = 10.0
Stamps = dict[Path, tuple[int, int]]


class Landlock(Backend):
    name = "landlock"

    def __init__(self, environ: Mapping[str, str]):
        self.abi = 0
        self.perl = find_perl(environ)
        """The launcher (``launcher.py``); None: ``preexec_fn`` forks the runtime instead."""
        self._rulesets: dict[SandboxPolicy, _Ruleset] = {}
        self._lock = threading.Lock()
        """Held from choosing a ruleset to the child's exec: no ruleset is closed while a
        child still has to use its descriptor."""

    def problem(self) -> str | None:
        self.abi = sys_.abi_version()
        if self.abi < 1:
            return "this kernel has no Landlock (Linux ≥ 5.13 with landlock in its LSM list)"
        if self.perl is not None and not self._launcher_works():
            self.perl = None
        return None

    def _launcher_works(self) -> bool:
        assert self.perl is not None
        ruleset = sys_.create_ruleset(self.abi, block_tcp=False)
        try:
            _grant(ruleset, Path("/"), READ)
            argv, env = perl_command(self.perl, ruleset, None, ["/bin/sh", "-c", ":"], {})
            done = subprocess.run(argv, env=env, pass_fds=(ruleset,), capture_output=True,
                                  timeout=PROBE_TIMEOUT, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        finally:
            os.close(ruleset)
        return done.returncode == 0

    def popen(self, argv: Sequence[str], policy: SandboxPolicy,
              **options: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            ruleset = self._ruleset(policy)
            if self.perl is None:
                return subprocess.Popen(argv, preexec_fn=ruleset.restrict, **options)
            env = options.pop("env", None)
            command, clean = perl_command(self.perl, ruleset.fd, ruleset.program_code, argv,
                                          os.environ if env is None else env)
            return subprocess.Popen(command, env=clean, pass_fds=(ruleset.fd,), **options)

    def limits(self, policy: SandboxPolicy) -> list[str]:
        notes = ["directory listings stay readable everywhere (names, not contents)",
                 "the machine's /dev/shm is read-only: POSIX shared memory and semaphores "
                 "(Python's multiprocessing) fail"]
        kept_out = [*policy.hidden_paths(), *policy.protected]
        for root in [*policy.writable, Path("/tmp")]:
            if any(within(path, root) and path != root for path in kept_out):
                notes.append(f"{root} holds a hidden path or a start-up file: its entries are "
                             f"granted one by one, so nothing new can be made directly in it")
        if native_arch() is None:
            notes.append("no seccomp filter for this CPU: Unix sockets stay open"
                         + ("" if policy.network or self.abi >= 4 else ", and the network"))
        else:
            notes.append("Unix sockets cannot be created (Landlock cannot tell which one a "
                         "command would connect to)")
        return notes

    def reach(self, policy: SandboxPolicy) -> dict[str, str]:
        sockets = ("no socket at all (seccomp)" if not policy.network and native_arch()
                   else "no Unix socket can be created (seccomp)" if native_arch()
                   else "Unix sockets are not filtered on this CPU")
        if self.abi >= 6:
            sockets += "; abstract Unix sockets and signals stay inside the sandbox"
        return {"capabilities": "none, even as root (cleared before the command starts, no "
                                "new privileges)", "sockets": sockets}

    def close(self) -> None:
        with self._lock:
            for ruleset in self._rulesets.values():
                ruleset.close()
            self._rulesets.clear()

    def _ruleset(self, policy: SandboxPolicy) -> _Ruleset:
        cached = self._rulesets.get(policy)
        if cached is not None and cached.fresh():
            return cached
        if cached is not None:
            cached.close()
            del self._rulesets[policy]
        if len(self._rulesets) >= CACHED_RULESETS:
            oldest = next(iter(self._rulesets))
            self._rulesets.pop(oldest).close()
        built = self._rulesets[policy] = _Ruleset(policy, self.abi)
        return built


class _Ruleset:
    """One policy's ruleset descriptor, its seccomp program and what it was cut from."""

    def __init__(self, policy: SandboxPolicy, abi: int):
        self.stamps: Stamps = {}
        self.fd = sys_.create_ruleset(abi, block_tcp=not policy.network)
        try:
            self._add_rules(policy, sys_.fs_rights(abi))
        except BaseException:
            os.close(self.fd)
            raise
        arch = native_arch()
        self.program = Program(arch, families(network=policy.network)) if arch else None
        self.program_code = self.program.code if self.program else None
        self.restrict = sys_.Restrictor(self.fd, self.program.pointer if self.program else None)

    def _add_rules(self, policy: SandboxPolicy, everything: int) -> None:
        hidden = policy.hidden_paths()
        _grant(self.fd, Path("/"), sys_.READ_DIR)
        for path in grants(Path("/"), hidden, self.stamps):
            _grant(self.fd, path, READ)
        roots = [*policy.writable, *([Path("/tmp")] if policy.mode == "workspace-write" else [])]
        kept_out = [*hidden, *policy.protected]  # start-up files keep only the read grant
        for root in roots:
            for path in grants(root, kept_out, self.stamps):
                _grant(self.fd, path, everything)
        for device in DEVICES:
            _grant(self.fd, Path(device), everything)

    def fresh(self) -> bool:
        """Whether every directory the rules were cut from still has the same entries."""
        return all(_stamp(path) == stamp for path, stamp in self.stamps.items())

    def close(self) -> None:
        os.close(self.fd)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (0, 0)
    return (info.st_ino, info.st_mtime_ns)


def grants(root: Path, hidden: Sequence[Path], stamps: Stamps) -> Iterator[Path]:
    """Paths whose subtrees together cover ``root``'s, leaving out every ``hidden`` path
    (real paths); each directory split on the way is recorded in ``stamps``."""
    if any(within(root, path) for path in hidden):
        return
    if not any(within(path, root) for path in hidden):
        yield root
        return
    stamps[root] = _stamp(root)
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        # A rule on a symlink would land on its target, which may be anywhere (a hidden
        # path, or outside a writable root); the target is granted where it really is.
        if not entry.is_symlink():
            yield from grants(Path(entry.path), hidden, stamps)


def _grant(ruleset: int, path: Path, rights: int) -> None:
    """Add a rule for ``path`` (followed); a path that vanished or cannot be opened is
    simply not granted."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= sys_.FILE_RIGHTS
        sys_.add_path_rule(ruleset, fd, rights)
    finally:
        os.close(fd)
