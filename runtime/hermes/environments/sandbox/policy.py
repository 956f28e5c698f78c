"""What a confined command may read, write and reach.

Built per command from the runtime's own ``Home``, its sandbox settings, the
working directory and the runtime's environment (``HOME``, ``DOCKER_HOST``) —
never from process state — so two runtimes in one process (the gateway, the warm
server's children) each confine their commands by their own profile.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from hermes.config.cache_signing import key_directory
from hermes.config.schema import SandboxSettings
from hermes.environments.sandbox.mounts import aliases, read_mounts
from hermes.errors import SandboxUnavailable
from hermes.home import Home

CREDENTIAL_STORES = (".ssh", ".aws", ".config/gcloud", ".kube", ".docker/config.json",
                     ".netrc", ".git-credentials", ".gnupg", ".pgpass", ".pypirc", ".npmrc",
                     ".azure", ".config/gh", ".config/hub", ".cargo/credentials",
                     ".cargo/credentials.toml", ".local/share/keyrings",
                     ".password-store", ".vault-token", ".terraform.d/credentials.tfrc.json")
"""Under the user's home: what commands and the file tools never read (while the
sandbox is on) and never write, whatever the config says."""
SERVICE_CREDENTIALS = ("/run/secrets",)
START_UP_FILES = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
                  ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc",
                  ".kshrc", ".mkshrc", ".inputrc", ".xprofile", ".xinitrc", ".xsession",
                  ".xsessionrc", ".pam_environment", ".gitconfig", ".config/git",
                  ".config/fish", ".config/nushell", ".config/autostart",
                  ".config/environment.d", ".config/systemd", ".config/plasma-workspace",
                  ".local/share/systemd", ".local/bin", ".ssh/rc", ".hushlogin")
"""Under the user's home: what runs code when the user next logs in, opens a shell, starts
a desktop or runs git (a shell's start-up files, autostart entries, user units, git's
hooks and pager settings, ``~/.local/bin`` on PATH). Commands and file tools never
change them, not even with the home as working directory, unless ``allow_write`` names
one of them (or something inside it)."""
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
    hermes: bool = False
    """Part of the Hermes root (changed only by the tools that validate, scan and
    record)."""


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
    protected: tuple[Path, ...] = ()
    """Start-up files inside a writable directory: readable, never written (they may
    not exist yet: then nothing may create them)."""
    tmp: Path | None = Path("/tmp")
    """The real directory commands see as ``/tmp`` (a session's own under bubblewrap);
    None: an empty one of the command's own."""

    @cached_property
    def _hidden_index(self) -> dict[str, Hidden]:
        return {str(entry.path): entry for entry in reversed(self.hidden)}

    def hiding(self, path: Path) -> Hidden | None:
        """The hidden entry ``path`` is in (an absolute, normalised path), or None: a
        lookup per level of ``path``, not a comparison per hidden entry."""
        index = self._hidden_index
        text = str(path)
        while True:
            found = index.get(text)
            if found is not None or text == "/":
                return found
            text = text.rsplit("/", 1)[0] or "/"

    def hidden_paths(self) -> list[Path]:
        return [entry.path for entry in self.hidden]

    def existing_hidden(self) -> list[Path]:
        return [path for path in self.hidden_paths() if os.path.lexists(path)]


def home_workspace_note(cwd: Path, environ: Mapping[str, str]) -> str | None:
    """What the user is told when the working directory is their home: every file in it
    is then the agent's to change (chat says it once, and doctor)."""
    if real(cwd) != real(user_home(environ)):
        return None
    return (f"the working directory is your home ({cwd}): commands and file tools may "
            f"change any file in it except start-up files (~/.bashrc, ~/.profile, ...) and "
            f"credential stores; start hermes in a project directory, or set "
            f"environment.cwd")


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


Resolve = Callable[[Path], Path]
"""``real``, or one that also records what it resolved (``Resolutions``)."""


class Resolutions:
    """``real`` that records every path it resolved, so a policy can be kept while none
    of the directories on the way to them changes (a link made or removed there changes
    the directory's modification time)."""

    def __init__(self) -> None:
        self.directories: set[Path] = set()

    def __call__(self, path: Path) -> Path:
        resolved = real(path)
        for each in (path, resolved):
            self.directories.update(each.parents)
        return resolved

    def stamps(self) -> tuple[tuple[Path, int, int], ...]:
        """Inode and modification time of each directory (0, 0 where it is missing)."""
        return tuple((path, *_stat(path)) for path in sorted(self.directories))


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (0, 0)
    return (info.st_ino, info.st_mtime_ns)


def unchanged(stamps: tuple[tuple[Path, int, int], ...]) -> bool:
    """Whether every directory still has the recorded inode and modification time."""
    return all(_stat(path) == (inode, mtime) for path, inode, mtime in stamps)


def build_policy(home: Home, settings: SandboxSettings, cwd: Path,
                 environ: Mapping[str, str], tmp: Path | None = TMP,
                 secret_files: Sequence[Path] = (), resolve: Resolve = real) -> SandboxPolicy:
    """The policy for a command of ``home`` run in ``cwd`` that sees ``tmp`` as /tmp
    (None: an empty one of its own); ``secret_files`` are hidden too. Refuses a working
    directory or ``allow_write`` entry the sandbox would hide. ``resolve`` resolves
    every path it is cut from."""
    real = resolve
    hidden = _hidden(home, settings, environ, secret_files, resolve)
    workdir = real(cwd)
    _refuse_hidden(workdir, hidden, f"the working directory {cwd}",
                   "work in a directory outside it (environment.cwd)")
    writable = [workdir] if settings.mode == "workspace-write" else []
    for entry in settings.allow_write if settings.mode == "workspace-write" else []:
        path = real(expand(entry, environ))
        _refuse_hidden(path, hidden, f"{SETTING}.allow_write: {entry}",
                       "remove it from allow_write")
        writable.append(path)
    kept = tuple(dict.fromkeys(writable))
    return SandboxPolicy(settings.mode, settings.network == "on", workdir, tuple(hidden),
                         kept, _programs(environ, resolve),
                         _protected(settings, environ, kept, resolve), tmp)


def _protected(settings: SandboxSettings, environ: Mapping[str, str],
               writable: tuple[Path, ...], real: Resolve) -> tuple[Path, ...]:
    """The start-up files inside ``writable``, but those ``allow_write`` names."""
    named = [real(expand(entry, environ)) for entry in settings.allow_write]
    base = real(user_home(environ))
    found = []
    for name in START_UP_FILES:
        path = base / name
        if any(within(path, root) for root in writable) and not any(
                within(entry, path) for entry in named):
            found.append(path)
    return tuple(found)


def _programs(environ: Mapping[str, str], real: Resolve) -> tuple[Path, ...]:
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


def _hidden(home: Home, settings: SandboxSettings, environ: Mapping[str, str],
            secret_files: Sequence[Path], real: Resolve) -> list[Hidden]:
    found = [*hermes_roots(home, environ, real), *unreadable(settings, environ, real)]
    found += [Hidden(real(path), "a secrets file of this profile (secrets.environment_files)")
              for path in secret_files]
    found += [Hidden(real(Path(sock)), "the docker daemon's socket") for sock in _sockets(environ)]
    return _outermost(found + _aliases(found))


def hermes_roots(home: Home, environ: Mapping[str, str], real: Resolve = real) -> list[Hidden]:
    """The Hermes root, this home, and the user's default root (``~/.hermes``, every
    profile of the user's own, when this runtime's root is elsewhere)."""
    return [Hidden(real(home.root), "the Hermes root: every profile's home", hermes=True),
            Hidden(real(home.path), "this profile's home", hermes=True),
            Hidden(real(user_home(environ) / ".hermes"), "the user's default Hermes root",
                   hermes=True)]


def _aliases(entries: list[Hidden]) -> list[Hidden]:
    """Each hidden path again where another mount of its file system shows it."""
    mounts = read_mounts()
    return [Hidden(Path(alias), f"{entry.path} mounted again here ({entry.why})", entry.hermes)
            for entry in entries for alias in aliases(str(entry.path), mounts)]


def unreadable(settings: SandboxSettings, environ: Mapping[str, str],
               real: Resolve = real) -> list[Hidden]:
    """The credential stores and ``deny_read``: what neither commands nor the file tools
    can read while the sandbox is on."""
    base = user_home(environ)
    found = [Hidden(real(base / name), "credential store") for name in CREDENTIAL_STORES]
    found += [Hidden(real(Path(path)), "the machine's service credentials")
              for path in _service_credentials(environ)]
    found.append(Hidden(real(key_directory(environ)), "the config cache's keys"))
    return found + [Hidden(real(expand(entry, environ)), f"{SETTING}.deny_read")
                    for entry in settings.deny_read]


def _service_credentials(environ: Mapping[str, str]) -> list[str]:
    """Docker's and Kubernetes' secrets directory, and systemd's ``LoadCredential=``
    directory of this service."""
    credentials = environ.get("CREDENTIALS_DIRECTORY", "")
    return [*SERVICE_CREDENTIALS, *([credentials] if credentials.startswith("/") else [])]


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
