"""File tools over SFTP on the ssh environment's host (paramiko's ``SFTPClient``)."""

from __future__ import annotations

import contextlib
import posixpath
import uuid
from typing import Any

from hermes.environments.files import FileInfo, Files, kind_of
from hermes.errors import SandboxError


class SFTPFiles(Files):
    """The remote host's files; ``home`` is where SFTP sessions start (the login directory)."""

    def __init__(self, sftp: Any, cwd: str, home: str):
        self._sftp = sftp
        self.cwd = cwd
        self.home = home

    def info(self, path: str) -> FileInfo | None:
        try:
            found = self._sftp.stat(path)  # follows symlinks, as the local tools do
        except OSError:
            return None
        mode = found.st_mode or 0
        return FileInfo(kind_of(mode), found.st_size or 0, mode & 0o777)

    def read(self, path: str) -> bytes:
        try:
            with self._sftp.open(path, "rb") as handle:
                handle.prefetch()
                data: bytes = handle.read()
                return data
        except OSError as exc:
            raise SandboxError(f"cannot read {path}: {exc.strerror or exc}") from exc

    def write(self, path: str, data: bytes, mode: int) -> None:
        directory = posixpath.dirname(path)
        temporary = posixpath.join(directory, f".{posixpath.basename(path)}.{uuid.uuid4().hex}")
        try:
            self._make_dirs(directory)
            with self._sftp.open(temporary, "wb") as handle:
                handle.write(data)
            self._sftp.chmod(temporary, mode)
            self._sftp.posix_rename(temporary, path)  # atomic replace (OpenSSH extension)
        except OSError as exc:
            self._remove_quietly(temporary)
            raise SandboxError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def names(self, directory: str) -> list[str]:
        try:
            return list(self._sftp.listdir(directory))
        except OSError:
            return []

    def _make_dirs(self, directory: str) -> None:
        if not directory or directory == "/" or self.info(directory) is not None:
            return
        self._make_dirs(posixpath.dirname(directory))
        self._sftp.mkdir(directory)

    def _remove_quietly(self, path: str) -> None:
        with contextlib.suppress(OSError):
            self._sftp.remove(path)
