"""bubblewrap (``bwrap``): each command in its own mount, pid (and, with ``network:
off``, network) namespace. The root file system is mounted read-only; hidden
directories become empty read-only ones and hidden files ``/dev/null``; the working
directory and ``allow_write`` are bound writable (a directory holding a start-up file
entry by entry, so the file stays read-only and cannot be made); ``/tmp`` is the
session's own directory (a fresh tmpfs for a command of no session).

bwrap sets ``PR_SET_NO_NEW_PRIVS`` and, with ``--cap-drop ALL``, leaves no capability
even to root, so neither a setuid binary nor ``mount`` can undo the hiding. Where the
kernel has Landlock ABI ≥ 6 the command is started through the launcher with a ruleset
that only scopes: the host's abstract Unix sockets (X11, some D-Bus buses) and signals
stay out of reach. With ``network: off`` the socket files of the host outside the
working directory are hidden too. The process group is kept (no ``--new-session``) so
a timeout or an interrupt still kills the command with everything it started.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes.environments.sandbox import landlock_sys as sys_
from hermes.environments.sandbox.base import Backend
from hermes.environments.sandbox.launcher import find_perl, perl_command
from hermes.environments.sandbox.policy import TMP, SandboxPolicy, within

PROBE_TIMEOUT = 10.0
SHELL = "/bin/sh"


UNIX_SOCKETS = "/proc/net/unix"


_PROBED: dict[tuple[object, ...], str | None] = {}
"""Probe outcomes by bwrap's path and file stat, for this process and its forks: the warm
server probes once before it forks (issue 26), its commands reuse the outcome while the
same bwrap is installed."""


def _probe_key(executable: str) -> tuple[object, ...]:
    try:
        found = os.stat(executable)
    except OSError:
        return (executable, None)
    return (executable, os.getuid(), found.st_ino, found.st_size, found.st_mtime_ns,
            found.st_mode)


class Bubblewrap(Backend):
    name = "bubblewrap"
    private_tmp = True

    def __init__(self, environ: Mapping[str, str]):
        self.executable = shutil.which("bwrap", path=environ.get("PATH") or os.defpath)
        self.perl = find_perl(environ)
        self._scope: int | None = None
        """A Landlock ruleset that only scopes (abstract sockets, signals); None: the
        kernel or the launcher cannot."""
        self._lock = threading.Lock()

    def problem(self) -> str | None:
        if self.executable is None:
            return "bwrap is not installed"
        key = _probe_key(self.executable)
        if key not in _PROBED:
            _PROBED[key] = self._probe(self.executable)
        problem = _PROBED[key]
        if problem is None and self.perl is not None and self._scope is None:
            self._scope = sys_.create_scope_ruleset(sys_.abi_version())
        return problem

    def _probe(self, executable: str) -> str | None:
        probe = [executable, *_namespaces(network=False), "--", SHELL, "-c", ":"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=PROBE_TIMEOUT,
                                  check=False, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap did not start: {exc}"
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            reason = said[0] if said else f"exit {done.returncode}"
            return f"bwrap cannot set up its namespaces here: {reason}"
        return None

    def popen(self, argv: Sequence[str], policy: SandboxPolicy,
              **options: Any) -> subprocess.Popen[bytes]:
        assert self.executable is not None
        head = [self.executable, *arguments(policy), "--"]
        with self._lock:
            if self._scope is None or self.perl is None:
                return subprocess.Popen([*head, *argv], **options)
            env = options.pop("env", None)
            command, clean = perl_command(self.perl, self._scope, None, argv,
                                          os.environ if env is None else env)
            return subprocess.Popen([*head, *command], env=clean, pass_fds=(self._scope,),
                                    **options)

    def close(self) -> None:
        with self._lock:
            if self._scope is not None:
                os.close(self._scope)
                self._scope = None

    def reach(self, policy: SandboxPolicy) -> dict[str, str]:
        if not policy.network:
            hidden = len(unix_sockets(policy))
            sockets = (f"no network: a namespace of its own (its abstract Unix sockets are "
                       f"its own); the host's {hidden} listening socket files outside the "
                       f"working directory are hidden")
        elif self.scoped:
            sockets = ("Unix socket files in visible paths can be reached; the host's "
                       "abstract Unix sockets and processes (signals) cannot (Landlock "
                       "scoping)")
        else:
            sockets = ("Unix socket files in visible paths and the host's abstract Unix "
                       "sockets can be reached (scoping needs Landlock ABI ≥ 6 and perl)")
        return {"capabilities": "none, even as root (bwrap --cap-drop ALL, no new "
                                "privileges)", "sockets": sockets}

    @property
    def scoped(self) -> bool:
        """Whether abstract Unix sockets and signals are scoped to the sandbox."""
        return self._scope is not None

    def setup_failed(self, exit_code: int, output: str) -> bool:
        # bwrap re-reads the mount table while it binds /: a mount that comes or goes
        # meanwhile (a docker build) fails it with one line of its own, before the command.
        return exit_code == 1 and output.startswith("bwrap: ") and output.count("\n") <= 1

    def limits(self, policy: SandboxPolicy) -> list[str]:
        notes = ["hidden directories look empty and hidden files empty",
                 "the machine's /tmp is not visible: each session gets one of its own, which "
                 "the file tools see as /tmp too (a working directory, allow_write entry or "
                 "PATH directory under /tmp stays visible)"]
        for holder in sorted(_holders(policy)):
            notes.append(f"{holder} would hold a start-up file: commands cannot make "
                         f"anything directly in it, nor remove or rename its entries")
        if policy.network:
            notes.append("Unix socket files in visible paths (an ssh agent, D-Bus) can be "
                         "reached")
            if not self.scoped:
                notes.append("the host's abstract Unix sockets (X11, some D-Bus buses) can "
                             "be reached: scoping them needs Landlock ABI ≥ 6 and perl")
        return notes


def _namespaces(*, network: bool) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
            "--die-with-parent", "--cap-drop", "ALL"]
    return args if network else [*args, "--unshare-net"]


def arguments(policy: SandboxPolicy) -> list[str]:
    """bwrap's options for ``policy``; later mounts cover earlier ones, so the hidden
    paths come after the writable ones (a Hermes root inside the workspace stays hidden)."""
    args = _namespaces(network=policy.network)
    args += ["--tmpfs", "/tmp"] if policy.tmp is None else ["--bind", str(policy.tmp), "/tmp"]
    readable = [*policy.programs, *([policy.cwd] if policy.cwd not in policy.writable else [])]
    for path in readable:  # read-only: a working directory or PATH entry in /tmp stays
        args += ["--ro-bind", str(path), str(path)]
    for path in policy.writable:
        if path.is_dir():
            args += ["--bind", str(path), str(path)]
    args += _start_up_files(policy)
    for path in policy.existing_hidden():
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    if not policy.network:
        for socket in unix_sockets(policy):
            args += ["--ro-bind", "/dev/null", socket]
    return [*args, "--chdir", str(policy.cwd)]


def _start_up_files(policy: SandboxPolicy) -> list[str]:
    """Mounts that keep the start-up files in writable directories unchanged: each one
    that exists read-only over itself; where one is missing, the directory that would
    hold it read-only with its entries bound writable again one by one (so nothing can
    be made directly in it, and only its own entries cannot be removed or renamed)."""
    args: list[str] = []
    for directory in sorted(_holders(policy), key=lambda path: len(path.parts)):
        args += ["--ro-bind", str(directory), str(directory)]
        for entry in _entries(directory):  # a start-up file among them: read-only below
            args += ["--bind", str(entry), str(entry)]
    for path in policy.protected:
        if os.path.lexists(path) and not os.path.islink(path):
            args += ["--ro-bind", str(path), str(path)]
    return args


def _holders(policy: SandboxPolicy) -> set[Path]:
    """The nearest existing directory of each missing start-up file (in a writable one)."""
    found = set()
    for path in policy.protected:
        if os.path.lexists(path):
            continue
        holder = path.parent
        while not holder.is_dir() and holder != holder.parent:
            holder = holder.parent
        if any(within(holder, root) for root in policy.writable):
            found.add(holder)
    return found


def _entries(directory: Path) -> Iterator[Path]:
    """A directory's entries that can be bound (not links: a bind lands on the target)."""
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not entry.is_symlink():
                    yield Path(entry.path)
    except OSError:
        return


def unix_sockets(policy: SandboxPolicy) -> list[str]:
    """The host's listening socket files outside the working directory (and not already
    hidden): with the network off, commands reach none of them."""
    try:
        with open(UNIX_SOCKETS, encoding="utf-8", errors="surrogateescape") as table:
            lines = table.read().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(None, 7)
        named = fields[7] if len(fields) == 8 else ""
        if not named.startswith("/"):
            continue  # abstract, or unnamed
        path = Path(os.path.realpath(named))  # a mount point cannot be made through a link
        if within(path, policy.cwd) or policy.hiding(path) is not None:
            continue
        if within(path, TMP) and not any(  # the private /tmp does not show it
                within(path, base) for base in (*policy.writable, *policy.programs)):
            continue
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found.append(str(path))
        except OSError:
            continue
    return list(dict.fromkeys(found))
