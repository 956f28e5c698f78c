"""File access inside an execution environment, for the file tools.

Paths are the environment's own absolute paths: the local disk for ``local``,
the container's file system for ``docker`` (through ``exec``), the remote
host's for ``ssh`` (through SFTP, see ``sftp_files.py``).
"""

from __future__ import annotations

import base64
import os
import posixpath
import stat
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from hermes.environments.sandbox.access import FileAccess, Located, refuse_credentials
from hermes.errors import SandboxError

FileKind = Literal["file", "dir", "other"]


@dataclass(frozen=True)
class FileInfo:
    kind: FileKind
    size: int
    mode: int
    """Permission bits (``0o644``)."""


def kind_of(mode: int) -> FileKind:
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


class Files(ABC):
    """Read and write files where the environment's commands run."""

    is_local = False
    """True when paths are this machine's (the local safety checks apply to them)."""
    cwd: str
    """Where relative paths start."""
    home: str
    """What ``~`` means there."""

    @abstractmethod
    def info(self, path: str) -> FileInfo | None:
        """What ``path`` is (symlinks followed), or None when it does not exist."""

    @abstractmethod
    def read(self, path: str) -> bytes:
        """The whole file."""

    @abstractmethod
    def write(self, path: str, data: bytes, mode: int) -> None:
        """Replace ``path`` atomically (temporary file, then rename) with mode ``mode``."""

    @abstractmethod
    def names(self, directory: str) -> list[str]:
        """Entry names of ``directory``; empty when it cannot be listed."""

    def resolve(self, path: str) -> str:
        """``path`` made absolute against ``cwd`` (``~`` is ``home``) and normalised."""
        if path == "~" or path.startswith("~/"):
            path = self.home + path[1:]
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def locate(self, raw: str, *, write: bool = False) -> tuple[str, str]:
        """``(path to read or write, path to show)`` for the path a tool was given;
        raises ``PathRefused`` where the tool may not go. Elsewhere than this machine
        only the user's credential stores are refused for writing."""
        path = self.resolve(raw)
        if write:
            refuse_credentials(PurePosixPath(path), PurePosixPath(self.home))
        return path, path


class LocalFiles(Files):
    """This machine's disk, as the session's sandbox policy lets the tools see it
    (``FileAccess``): paths are resolved in the commands' view and checked."""

    is_local = True

    def __init__(self, cwd: str, home: str, access: FileAccess):
        self.cwd = cwd
        self.home = home
        self.access = access

    def locate(self, raw: str, *, write: bool = False) -> tuple[str, str]:
        place = self.access.locate(raw, Path(self.cwd))
        (self.access.check_write if write else self.access.check_read)(place)
        return str(place.real), str(place.shown)

    def info(self, path: str) -> FileInfo | None:
        try:
            found = os.stat(path)
        except OSError:
            return None
        return FileInfo(kind_of(found.st_mode), found.st_size, found.st_mode & 0o777)

    def read(self, path: str) -> bytes:
        return self.access.read(Located(Path(path), Path(path)))

    def write(self, path: str, data: bytes, mode: int) -> None:
        self.access.write(Located(Path(path), Path(path)), data, mode)

    def names(self, directory: str) -> list[str]:
        try:
            return [entry.name for entry in os.scandir(directory)]
        except OSError:
            return []


Exec = Callable[[list[str]], tuple[int, bytes, bytes]]
"""Runs an argv where the files are: ``(exit code, stdout, stderr)``."""
# One argument stays well under Linux's 128 KiB limit for a single argv string.
CHUNK_BYTES = 64 * 1024


class ShellFiles(Files):
    """Files reached through commands (``stat``, ``cat``, ``base64``, ``mv``) in a
    container: works on read-only roots and tmpfs mounts, where ``docker cp`` does not."""

    def __init__(self, run: Exec, cwd: str, home: str):
        self._run = run
        self.cwd = cwd
        self.home = home

    def _sh(self, script: str, *args: str) -> bytes:
        code, out, err = self._run(["/bin/sh", "-c", script, "sh", *args])
        if code != 0:
            raise SandboxError(err.decode(errors="replace").strip() or f"exit code {code}")
        return out

    def info(self, path: str) -> FileInfo | None:
        code, out, _ = self._run(["stat", "-L", "-c", "%f %s", "--", path])
        if code != 0:
            return None
        raw_mode, size = out.decode().split()
        mode = int(raw_mode, 16)
        return FileInfo(kind_of(mode), int(size), mode & 0o777)

    def read(self, path: str) -> bytes:
        return self._sh('cat -- "$1"', path)

    def write(self, path: str, data: bytes, mode: int) -> None:
        temporary = f"{path}.hermes-{uuid.uuid4().hex}.tmp"
        encoded = base64.b64encode(data).decode()
        self._sh('mkdir -p -- "$(dirname -- "$1")" && : > "$2"', path, temporary)
        for start in range(0, len(encoded), CHUNK_BYTES):
            self._sh('printf %s "$2" | base64 -d >> "$1"', temporary,
                     encoded[start:start + CHUNK_BYTES])
        self._sh(f'chmod {mode:o} "$1" && mv -f "$1" "$2"', temporary, path)

    def names(self, directory: str) -> list[str]:
        code, out, _ = self._run(["ls", "-A1", "--", directory])
        return out.decode(errors="replace").splitlines() if code == 0 else []
