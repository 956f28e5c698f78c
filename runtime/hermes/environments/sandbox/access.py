"""The file tools' side of the sandbox: they read what commands may read and write only
where commands may write, judged by the same ``SandboxPolicy``.

A path is resolved as a command would see it: symlinks are followed one component at a
time in the command's view, where ``/tmp`` is the session's own directory under
bubblewrap. What is then opened is checked again where the kernel says it is
(``/proc/self/fd``), and writes go through a directory descriptor checked the same way,
so swapping a directory for a link between the check and the write gains nothing.

With the sandbox off (``mode: off``) the older rules hold: no other profile's files,
no credential store written. In every mode the Hermes root is never written here: only
the tools that validate, scan and record (memory, skill_manage, cronjob) change it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from hermes.environments.sandbox.policy import (
    CREDENTIAL_STORES,
    SETTING,
    TMP,
    Hidden,
    SandboxPolicy,
    hermes_roots,
    real,
    within,
)
from hermes.errors import ToolError
from hermes.home import PROFILES_DIR, Home

MAX_LINKS = 40
"""As the kernel: more links than this in one path is a loop."""


class PathRefused(ToolError):
    """A path a file tool must not touch."""


@dataclass(frozen=True)
class Located:
    """A path as the model named it, where it really is on this machine."""

    shown: Path
    """The path in the commands' view (what the model is told)."""
    real: Path
    """The same file on this machine (differs under /tmp with a private /tmp)."""


@dataclass(frozen=True)
class FileAccess:
    """What the file tools of one session may read and write on this machine."""

    home: Home
    user_home: Path
    """The OS user's home as the runtime sees it (``~``)."""
    policy: SandboxPolicy | None
    """The policy commands run under; None when the sandbox is off."""
    results: Path | None = None
    """The session's spilled tool results (in the home; a real path): the runtime's own
    output, which a tool result tells the model to page through with read_file."""
    credential_stores: tuple[Path, ...] = ()
    """The credential stores' real paths (never written, in any mode)."""

    # -- where a path is ---------------------------------------------------------------

    def locate(self, raw: str, cwd: Path) -> Located:
        """``raw`` made absolute against ``cwd`` (``~`` is the user's home) and resolved
        in the commands' view; refuses a path through something hidden."""
        if not raw.strip():
            raise ToolError("path is empty; give a file path")
        if raw == "~" or raw.startswith("~/"):
            named = self.user_home / raw[2:]
        else:
            named = Path(os.path.expanduser(raw))
        absolute = named if named.is_absolute() else cwd / named
        if self.results is not None and within(real(absolute), self.results):
            return Located(real(absolute), real(absolute))  # a host path, not the view's
        shown = self._resolve(absolute)
        return Located(shown, self.to_real(shown))

    def to_real(self, shown: Path) -> Path:
        """Where a path of the commands' view is on this machine."""
        policy = self.policy
        if policy is None or policy.tmp is None or policy.tmp == TMP or not within(shown, TMP):
            return shown
        if any(within(shown, base) for base in (policy.cwd, *policy.writable,
                                                  *policy.programs)):
            return shown  # bound at its own path over the private /tmp
        return policy.tmp / shown.relative_to(TMP)

    def _resolve(self, path: Path) -> Path:
        parts = list(path.parts[1:])
        current, links = Path("/"), 0
        while parts:
            name = parts.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                current = current.parent
                continue
            candidate = current / name
            self._refuse_hidden(candidate, candidate, path)
            try:
                target = os.readlink(self.to_real(candidate))
            except OSError:
                current = candidate  # not a link, or missing: the rest is taken as named
                continue
            links += 1
            if links > MAX_LINKS:
                raise ToolError(f"{path}: too many levels of symbolic links")
            if target.startswith("/"):
                current = Path("/")
            parts = [*Path(target).parts[1 if target.startswith("/") else 0:], *parts]
        return current

    # -- what may be read and written --------------------------------------------------

    def check_read(self, place: Located) -> None:
        if self.results is not None and within(place.real, self.results):
            return
        if self.policy is None:
            self._refuse_foreign(place.real, "read")
        else:
            self._refuse_hidden(place.shown, place.real)

    def check_write(self, place: Located) -> None:
        self._refuse_root(place.real)
        if self.policy is None:
            self._refuse_credentials(place.real)
            return
        self._refuse_hidden(place.shown, place.real)
        policy = self.policy
        for path in policy.protected:
            if within(place.real, path):
                raise PathRefused(
                    f"{place.shown} is a start-up file (it runs code when you next log in, "
                    f"open a shell or run git); tools never change it unless the user names "
                    f"it in {SETTING}.allow_write")
        if not any(within(place.real, root) for root in self._writable_roots()):
            raise PathRefused(self._outside(place.shown))

    def _writable_roots(self) -> Iterator[Path]:
        policy = self.policy
        assert policy is not None
        yield from policy.writable
        if policy.tmp is not None and (policy.mode == "workspace-write" or policy.tmp != TMP):
            yield policy.tmp

    def _outside(self, shown: Path) -> str:
        policy = self.policy
        assert policy is not None
        if policy.mode == "read-only":
            where = "/tmp only" if policy.tmp not in (None, TMP) else "nowhere"
            return (f"{shown}: {SETTING}.mode is read-only, so tools write {where}; the "
                    f"user can run `hermes config set {SETTING}.mode workspace-write`")
        return (f"{shown} is outside where this session may write (the working directory "
                f"{policy.cwd}, /tmp and {SETTING}.allow_write, as for commands); ask the "
                f"user to widen it, e.g. `hermes config set {SETTING}.allow_write "
                f"'[{shown.parent}]'`")

    def _refuse_hidden(self, shown: Path, real_path: Path, named: Path | None = None) -> None:
        if self.policy is None:
            return
        entry = self.policy.hiding(shown) or (
            self.policy.hiding(real_path) if real_path != shown else None)
        if entry is not None:
            raise PathRefused(_hidden_reason(named or shown, entry, self.policy.mode))

    def _refuse_root(self, path: Path) -> None:
        for entry in hermes_roots(self.home, {"HOME": str(self.user_home)}):
            if within(path, entry.path):
                raise PathRefused(_root_reason(path, entry))

    def _refuse_credentials(self, path: Path) -> None:
        for store in self.credential_stores:
            if within(path, store):
                raise PathRefused(f"{path} is a credential file ({store}); "
                                  "write tools never change credentials")

    def _refuse_foreign(self, path: Path, verb: str) -> None:
        """With the sandbox off: another profile's files stay its own."""
        root, this_home = real(self.home.root), real(self.home.path)
        if not within(path, root) or within(path, this_home) and this_home != root:
            return
        profiles = root / PROFILES_DIR
        if within(path, profiles):
            parts = path.relative_to(profiles).parts
            owner = f'profile "{parts[0]}"' if parts else "the profiles directory"
        elif this_home != root:
            owner = "the default profile (the Hermes root)"
        else:
            return
        raise PathRefused(f"{path} belongs to {owner}; a profile cannot {verb} another's files")

    # -- reading and writing what was checked ------------------------------------------

    def read(self, place: Located) -> bytes:
        """The file's bytes, after checking what was really opened."""
        fd = os.open(place.real, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            self.check_read(Located(place.shown, opened(fd, place.real)))
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathRefused(f"{place.shown} is not a regular file")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write(self, place: Located, data: bytes, mode: int) -> None:
        """Replace the file atomically through its checked directory."""
        self.check_write(place)
        directory = place.real.parent
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            where = opened(fd, directory)
            self.check_write(Located(place.shown, where / place.real.name))
            _replace(fd, place.real.name, data, mode)
        finally:
            os.close(fd)


def refuse_credentials(path: PurePath, user_home: PurePath) -> None:
    """Refuse writing ``path`` inside a credential store of ``user_home`` on a machine
    that is not this one (a container's, a remote host's: paths as named)."""
    for name in CREDENTIAL_STORES:
        store = user_home / name
        if path == store or str(path).startswith(f"{store}/"):
            raise PathRefused(f"{path} is a credential file (~/{name}); "
                              "write tools never change credentials")


def opened(fd: int, expected: Path) -> Path:
    """Where the kernel says ``fd`` is (``expected`` where ``/proc`` is not mounted)."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return real(expected)
    if not where.startswith("/"):  # a pipe, a socket: nothing a file tool should touch
        raise PathRefused(f"{expected} is not a file")
    return Path(where.removesuffix(" (deleted)"))


def _replace(directory: int, name: str, data: bytes, mode: int) -> None:
    """``name`` in the open ``directory`` replaced by ``data``: a temporary file there,
    fsync, chmod, one rename (a link at ``name`` is replaced, not followed)."""
    temporary = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW,
                 0o600, dir_fd=directory)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temporary, dir_fd=directory)
        raise
    os.close(fd)
    try:
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except OSError as exc:
        os.unlink(temporary, dir_fd=directory)
        if exc.errno == errno.EISDIR:
            raise ToolError(f"{name} is a directory; give a file path") from exc
        raise


def _root_reason(path: Path, entry: Hidden) -> str:
    return (f"{path} is in {entry.why} ({entry.path}), which file tools never change "
            f"(nor read while the sandbox is on): memories go through the memory tool, "
            f"skills through skill_manage, cron jobs through cronjob, settings through "
            f"`hermes config set` (they validate, scan and record what changes)")


def _hidden_reason(shown: Path, entry: Hidden, mode: str) -> str:
    if entry.hermes:
        return f"{_root_reason(shown, entry)}; commands cannot see it either"
    lift = (f"the user can remove it from {SETTING}.deny_read"
            if entry.why.endswith("deny_read") else "only the user can lift this")
    return (f"{shown} is inside {entry.path} ({entry.why}), which the local sandbox hides "
            f"from commands ({SETTING}.mode is {mode}), so the file tools refuse it too; "
            f"{lift}, or set {SETTING}.mode=off")

