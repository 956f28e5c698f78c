"""bubblewrap (``bwrap``): each command in its own mount, pid (and, with ``network:
off``, network) namespace. The root file system is mounted read-only; hidden
directories become empty read-only ones and hidden files ``/dev/null``; the working
directory and ``allow_write`` are bound writable; ``/tmp`` is a fresh tmpfs.

bwrap sets ``PR_SET_NO_NEW_PRIVS`` and drops every capability, so a setuid binary
cannot elevate; the process group is kept (no ``--new-session``) so a timeout or an
interrupt still kills the command with everything it started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from hermes.environments.sandbox.base import Backend
from hermes.environments.sandbox.policy import SandboxPolicy

PROBE_TIMEOUT = 10.0
SHELL = "/bin/sh"


class Bubblewrap(Backend):
    name = "bubblewrap"

    def __init__(self, environ: Mapping[str, str]):
        self.executable = shutil.which("bwrap", path=environ.get("PATH") or os.defpath)

    def problem(self) -> str | None:
        if self.executable is None:
            return "bwrap is not installed"
        probe = [self.executable, *_namespaces(network=False), "--", SHELL, "-c", ":"]
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
        return subprocess.Popen([self.executable, *arguments(policy), "--", *argv], **options)


    def setup_failed(self, exit_code: int, output: str) -> bool:
        # bwrap re-reads the mount table while it binds /: a mount that comes or goes
        # meanwhile (a docker build) fails it with one line of its own, before the command.
        return exit_code == 1 and output.startswith("bwrap: ") and output.count("\n") <= 1

    def limits(self, policy: SandboxPolicy) -> list[str]:
        return ["hidden directories look empty and hidden files empty",
                "the machine's /tmp is not visible: commands get an empty one of their own "
                "(a working directory, allow_write entry or PATH directory under /tmp stays "
                "visible)",
                "Unix sockets in visible paths (an ssh agent, D-Bus) can still be reached"]


def _namespaces(*, network: bool) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-pid", "--die-with-parent"]
    return args if network else [*args, "--unshare-net"]


def arguments(policy: SandboxPolicy) -> list[str]:
    """bwrap's options for ``policy``; later mounts cover earlier ones, so the hidden
    paths come after the writable ones (a Hermes root inside the workspace stays hidden)."""
    args = _namespaces(network=policy.network)
    readable = [*policy.programs, *([policy.cwd] if policy.cwd not in policy.writable else [])]
    for path in readable:  # read-only: a working directory or PATH entry in /tmp stays
        args += ["--ro-bind", str(path), str(path)]
    for path in policy.writable:
        if path.is_dir():
            args += ["--bind", str(path), str(path)]
    for path in policy.existing_hidden():
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return [*args, "--chdir", str(policy.cwd)]
