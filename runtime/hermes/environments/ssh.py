"""Run commands and file tools on a remote host over SSH (paramiko, imported lazily).

One connection per runtime, opened on first use and reused by every command
(a new channel each) and by the file tools (one SFTP session); a dropped
connection is reopened once. Commands lead their own process group, so a
timeout or Ctrl-C kills the command on the host, never the connection.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes.config.schema import SSHSettings
from hermes.environments.base import BackgroundProcess, CommandResult, Environment
from hermes.environments.files import Files
from hermes.environments.sftp_files import SFTPFiles
from hermes.environments.ssh_connect import open_client
from hermes.environments.streamed_process import StreamedProcess
from hermes.environments.streams import DRAIN_SECONDS, follow, kill_group_command, wrap_command
from hermes.errors import SandboxError
from hermes.home import Home


def _chunks(channel: Any) -> Iterator[bytes]:
    while data := channel.recv(65536):
        yield data


class SSHEnvironment(Environment):
    kind = "ssh"

    def __init__(self, home: Home, settings: SSHSettings, cwd: str | None, timeout: float,
                 environ: Mapping[str, str]):
        if not settings.host:
            raise SandboxError("environment.ssh.host is not set")
        self.home = home
        self.settings = settings
        self.cwd = cwd
        self.timeout = timeout
        self.environ = dict(environ)
        self._client: Any = None
        self._sftp: Any = None
        # Parallel-safe tools (read_file, search_files) may connect at the same time.
        self._lock = threading.RLock()

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = self._sftp = None

    def transport(self) -> Any:
        """The live connection, opened (or reopened after a drop) as needed."""
        with self._lock:
            transport = self._client.get_transport() if self._client is not None else None
            if transport is None or not transport.is_active():
                self.stop()
                self._client = open_client(self.settings, self.environ)
                transport = self._client.get_transport()
            return transport

    def _channel(self, command: str) -> Any:
        import paramiko

        try:
            channel = self.transport().open_session(timeout=self.settings.connect_timeout)
            channel.set_combine_stderr(True)
            channel.exec_command(command)
        except (paramiko.SSHException, OSError) as exc:
            raise SandboxError(f"ssh {self.settings.host}: {exc}") from exc
        return channel

    def run(self, command: str, *, timeout: float | None = None,
            cancelled: Callable[[], bool] | None = None) -> CommandResult:
        channel = self._channel(wrap_command(command, self._workdir()))
        try:
            followed = follow(_chunks(channel), timeout=timeout or self.timeout,
                              cancelled=cancelled, kill=self._kill)
            if followed.timed_out or followed.cancelled:
                return CommandResult(124 if followed.timed_out else 130, followed.output,
                                     timed_out=followed.timed_out, cancelled=followed.cancelled)
            channel.status_event.wait(DRAIN_SECONDS)
            return CommandResult(channel.exit_status, followed.output)
        finally:
            channel.close()

    def spawn(self, command: str, *, log_path: Path) -> BackgroundProcess:
        channel = self._channel(wrap_command(command, self._workdir()))

        def exit_code() -> int:
            channel.status_event.wait(DRAIN_SECONDS)
            return int(channel.exit_status)

        return StreamedProcess(_chunks(channel), exit_code=exit_code, kill=self._kill,
                               log_path=log_path)

    def _kill(self, group: int) -> None:
        channel = self._channel(kill_group_command(group))
        channel.status_event.wait(DRAIN_SECONDS)
        channel.close()

    def _workdir(self) -> str | None:
        """``cwd`` with a leading ``~`` made the login directory (the shell would not
        expand it once quoted)."""
        if self.cwd and (self.cwd == "~" or self.cwd.startswith("~/")):
            return self._sftp_home() + self.cwd[1:]
        return self.cwd

    def _session(self) -> Any:
        import paramiko

        with self._lock:
            self.transport()  # a reconnect drops the old SFTP session
            if self._sftp is None:
                try:
                    self._sftp = self._client.open_sftp()
                except (paramiko.SSHException, OSError) as exc:
                    raise SandboxError(f"ssh {self.settings.host}: no SFTP session ({exc}) — "
                                       "the file tools need the server's sftp subsystem") from exc
            return self._sftp

    def _sftp_home(self) -> str:
        home: str = self._session().normalize(".")
        return home

    def files(self) -> Files:
        home = self._sftp_home()
        workdir = self._workdir() or home
        return SFTPFiles(self._session(), posixpath.normpath(workdir), home)
