"""The file tools' reads and writes through the editor (``fs/read_text_file`` and
``fs/write_text_file``).

An editor that offers these methods answers reads from its buffers, unsaved changes
included, and applies writes to them (so the user sees and can undo them). What it
does not offer goes to the disk, as without an editor. Paths stay this machine's: the
local checks of the file tools (credentials, other profiles) apply unchanged, and
metadata (whether a file exists, its size, a directory's entries) comes from the disk.
"""

from __future__ import annotations

from hermes.acp.channel import Bridge
from hermes.environments.files import FileInfo, Files
from hermes.errors import ToolError

EDITOR_TIMEOUT = 30.0
"""Seconds the editor gets to answer one read or write."""


class EditorFiles(Files):
    """``disk`` (a local environment's files), with reads and writes as the editor offers."""

    is_local = True

    def __init__(self, disk: Files, bridge: Bridge, session_id: str, *, read: bool,
                 write: bool):
        self._disk = disk
        self._bridge = bridge
        self._session_id = session_id
        self._read = read
        self._write = write
        self.cwd = disk.cwd
        self.home = disk.home

    def locate(self, raw: str, *, write: bool = False) -> tuple[str, str]:
        return self._disk.locate(raw, write=write)

    def info(self, path: str) -> FileInfo | None:
        return self._disk.info(path)

    def names(self, directory: str) -> list[str]:
        return self._disk.names(directory)

    def read(self, path: str) -> bytes:
        if not self._read:
            return self._disk.read(path)
        try:
            response = self._bridge.call(
                lambda client: client.read_text_file(session_id=self._session_id, path=path),
                timeout=EDITOR_TIMEOUT)
        except Exception as exc:
            raise ToolError(f"the editor could not read {path}: {exc}") from exc
        return response.content.encode("utf-8")

    def write(self, path: str, data: bytes, mode: int) -> None:
        if not self._write:
            self._disk.write(path, data, mode)
            return
        text = data.decode("utf-8")
        try:
            self._bridge.call(
                lambda client: client.write_text_file(session_id=self._session_id, path=path,
                                                      content=text),
                timeout=EDITOR_TIMEOUT)
        except Exception as exc:
            raise ToolError(f"the editor could not write {path}: {exc}") from exc
