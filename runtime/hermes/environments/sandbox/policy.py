"""What a confined command may read, write and reach.

Built per command from the runtime's own ``Home``, its sandbox settings, the
working directory and the runtime's environment (``HOME``, ``DOCKER_HOST``) —
never from process state — so two runtimes in one process (the gateway, the warm
server's children) each confine their commands by their own profile.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hermes.config.schema import SandboxSettings
from hermes.errors import SandboxUnavailable
from hermes.home import Home

CREDENTIAL_STORES = (".ssh", ".aws", ".config/gcloud", ".kube", ".docker/config.json",
                     ".netrc", ".git-credentials")
"""Under the user's home: what commands never read, whatever the config says."""
DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
"""A command that reaches the docker daemon can mount anything: root on this machine."""
SETTING = "environment.local.sandbox"
TMP = Path("/tmp")


@dataclass(frozen=True)
class Hidden:
    """A path commands cannot read (bubblewrap shows an empty directory or file)."""

    path: Path
    """Its real path (symlinks resolved)."""
    why: str


@dataclass(frozen=True)
class SandboxPolicy:
    """The confinement of one command."""

    mode: str
    """``workspace-write`` or ``read-only``."""
    network: bool
    """Whether the command may open network connections."""
    cwd: Path
    """The working directory (real path)."""
    hidden: tuple[Hidden, ...]
    writable: tuple[Path, ...]
    """Where writes are allowed besides the private /tmp: the working directory first,
    then ``allow_write`` (real paths; empty in ``read-only``)."""
    programs: tuple[Path, ...] = ()
    """Directories of ``PATH`` under /tmp (a virtualenv's whole tree for its ``bin``):
    readable although bubblewrap gives commands a /tmp of their own, so the programs
    the user runs (a project's virtualenv made in /tmp) are still found."""

    def hidden_paths(self) -> list[Path]:
        return [entry.path for entry in self.hidden]

    def existing_hidden(self) -> list[Path]:
        return [path for path in self.hidden_paths() if os.path.lexists(path)]


def user_home(environ: Mapping[str, str]) -> Path:
    """The OS user's home as the runtime sees it (its ``HOME``)."""
    return Path(environ.get("HOME") or Path.home())


def expand(path: str, environ: Mapping[str, str]) -> Path:
    """``~`` and ``~/x`` against the runtime's ``HOME``; ``~user`` by the password file."""
    if path == "~" or path.startswith("~/"):
        return user_home(environ) / path[2:]
    return Path(path).expanduser()


def real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def within(path: Path, base: Path) -> bool:
    """``path`` is ``base`` or under it (absolute, normalised paths: compared as text,
    which is about 20 times faster than ``Path.parents`` on every command)."""
    inner, outer = str(path), str(base)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def build_policy(home: Home, settings: SandboxSettings, cwd: Path,
                 environ: Mapping[str, str]) -> SandboxPolicy:
    """The policy for a command of ``home`` run in ``cwd``; refuses a working directory
    or ``allow_write`` entry the sandbox would hide."""
    hidden = _hidden(home, settings, environ)
    workdir = real(cwd)
    _refuse_hidden(workdir, hidden, f"the working directory {cwd}",
                   "work in a directory outside it (environment.cwd)")
    writable = [workdir] if settings.mode == "workspace-write" else []
    for entry in settings.allow_write if settings.mode == "workspace-write" else []:
        path = real(expand(entry, environ))
        _refuse_hidden(path, hidden, f"{SETTING}.allow_write: {entry}",
                       "remove it from allow_write")
        writable.append(path)
    return SandboxPolicy(settings.mode, settings.network == "on", workdir, tuple(hidden),
                         tuple(dict.fromkeys(writable)), _programs(environ))


def _programs(environ: Mapping[str, str]) -> tuple[Path, ...]:
    found: list[Path] = []
    for entry in environ.get("PATH", "").split(os.pathsep):
        if not entry.startswith(str(TMP)):  # resolving every entry costs each command
            continue
        path = real(Path(entry))
        if path == TMP or not within(path, TMP) or not path.is_dir():
            continue
        venv = path.parent
        found.append(venv if path.name == "bin" and (venv / "pyvenv.cfg").is_file() else path)
    return tuple(dict.fromkeys(found))


def _hidden(home: Home, settings: SandboxSettings, environ: Mapping[str, str]) -> list[Hidden]:
    found = [Hidden(real(home.root), "the Hermes root: every profile's home"),
             Hidden(real(home.path), "this profile's home")]
    found += unreadable(settings, environ)
    found += [Hidden(real(Path(sock)), "the docker daemon's socket") for sock in _sockets(environ)]
    return _outermost(found)


def unreadable(settings: SandboxSettings, environ: Mapping[str, str]) -> list[Hidden]:
    """The credential stores and ``deny_read``: what commands cannot see, and what the
    file tools refuse while the sandbox is on (``Sandbox.read_refusal``)."""
    base = user_home(environ)
    found = [Hidden(real(base / name), "credential store") for name in CREDENTIAL_STORES]
    return found + [Hidden(real(expand(entry, environ)), f"{SETTING}.deny_read")
                    for entry in settings.deny_read]


def _sockets(environ: Mapping[str, str]) -> list[str]:
    host = environ.get("DOCKER_HOST", "")
    extra = [host[len("unix://"):]] if host.startswith("unix://") else []
    return [*DOCKER_SOCKETS, *extra]


def _outermost(entries: list[Hidden]) -> list[Hidden]:
    """Without the paths that another one already covers (the first reason wins)."""
    kept: list[Hidden] = []
    for entry in entries:
        if any(within(entry.path, other.path) for other in kept):
            continue
        kept = [other for other in kept if not within(other.path, entry.path)] + [entry]
    return kept


def _refuse_hidden(path: Path, hidden: list[Hidden], what: str, fix: str) -> None:
    for entry in hidden:
        if within(path, entry.path):
            raise SandboxUnavailable(
                f"{what} is inside {entry.path} ({entry.why}), which sandboxed commands "
                f"cannot see: {fix}, or set {SETTING}.mode=off")
