"""Run commands and file tools in the profile's sandbox container (docker SDK, lazily
imported). The container outlives the process: the next runtime of the same
profile and task finds it by its labels; the reaper removes it once idle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from hermes.config.schema import DockerSettings
from hermes.credentials import Secrets
from hermes.environments.base import BackgroundProcess, CommandResult, Environment
from hermes.environments.docker_mounts import mounts
from hermes.environments.docker_sandbox import (
    USED_MARKER,
    SandboxSpec,
    connect,
    create_sandbox,
    find_sandbox,
    reap_idle,
    require_image,
)
from hermes.environments.files import Files, ShellFiles
from hermes.environments.streamed_process import StreamedProcess
from hermes.environments.streams import follow, kill_group_command, wrap_command
from hermes.errors import SandboxError, SandboxUnavailable
from hermes.home import Home

T = TypeVar("T")


def passed_environment(secrets: Secrets, names: list[str]) -> dict[str, str]:
    """Only the variables the config names, as the runtime's secrets resolve them (the
    profile's ``.env``, the process and ``secrets.environment_files``, in the order
    ``secrets.precedence`` says)."""
    return {name: value for name in names if (value := secrets.get(name)) is not None}


class DockerEnvironment(Environment):
    """The (profile, task) sandbox, found or created on the first command."""

    kind = "docker"

    def __init__(self, home: Home, settings: DockerSettings, cwd: str | None, timeout: float,
                 environ: Mapping[str, str], secrets: Secrets):
        self.cwd = cwd or "/workspace"
        self.timeout = timeout
        self.approvals_required = settings.approvals
        self.environ = dict(environ)
        self.spec = SandboxSpec(home, settings, self.cwd,
                                passed_environment(secrets, settings.env))
        self._client: Any = None
        self._container: Any = None
        self._home_dir: str | None = None
        # Parallel-safe tools (read_file, search_files) may need the container at once.
        self._lock = threading.RLock()

    def start(self) -> None:
        """Fail fast (daemon, image, mounts) and remove this profile's sandboxes that sat
        idle too long (other profiles' are theirs to reap, or ``hermes sandbox prune``'s)."""
        mounts(self.spec)
        self._client = connect(self.environ)
        self._guard(lambda: require_image(self._client, self.spec.settings.image))
        self._guard(lambda: reap_idle(self._client, self.spec.home))

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = self._container = None

    def attach(self, session_id: str) -> None:
        if self._container is None:
            self.spec = replace(self.spec, session=session_id)

    def container(self) -> Any:
        """The sandbox container, found by label or created."""
        with self._lock:
            if self._client is None:
                self.start()
            if self._container is None:
                self._container = self._guard(lambda: find_sandbox(self._client, self.spec)
                                              or create_sandbox(self._client, self.spec))
            return self._container

    def run(self, command: str, *, timeout: float | None = None,
            cancelled: Callable[[], bool] | None = None) -> CommandResult:
        return self._in_container(lambda container: self._follow(
            container, command, timeout or self.timeout, cancelled))

    def spawn(self, command: str, *, log_path: Path) -> BackgroundProcess:
        def start(container: Any) -> BackgroundProcess:
            exec_id, chunks = self._start(container, command)
            return StreamedProcess(chunks, exit_code=lambda: self._exit_code(exec_id),
                                   kill=self._killer(container), log_path=log_path)

        return self._in_container(start)

    def _start(self, container: Any, command: str) -> tuple[str, Iterator[bytes]]:
        """Start ``command`` wrapped (``streams.wrap_command``); its id and output stream."""
        wrapped = f": > {USED_MARKER} 2>/dev/null; {wrap_command(command, None)}"
        api = self._client.api
        exec_id: str = api.exec_create(container.id, ["/bin/sh", "-c", wrapped],
                                       workdir=self.cwd)["Id"]
        return exec_id, api.exec_start(exec_id, stream=True)

    def _exit_code(self, exec_id: str) -> int:
        code = self._guard(lambda: self._client.api.exec_inspect(exec_id)["ExitCode"])
        return -1 if code is None else int(code)

    @staticmethod
    def _killer(container: Any) -> Callable[[int], None]:
        return lambda group: container.exec_run(["/bin/sh", "-c", kill_group_command(group)])

    def _follow(self, container: Any, command: str, timeout: float,
                cancelled: Callable[[], bool] | None) -> CommandResult:
        exec_id, chunks = self._start(container, command)
        followed = follow(chunks, timeout=timeout, cancelled=cancelled,
                          kill=self._killer(container))
        if followed.timed_out or followed.cancelled:
            return CommandResult(124 if followed.timed_out else 130, followed.output,
                                 timed_out=followed.timed_out, cancelled=followed.cancelled)
        return CommandResult(self._exit_code(exec_id), followed.output)

    def files(self) -> Files:
        if self._home_dir is None:
            code, out, _ = self._exec(["/bin/sh", "-c", 'printf %s "${HOME:-/root}"'])
            self._home_dir = out.decode() if code == 0 and out else "/root"
        return ShellFiles(self._exec, self.cwd, self._home_dir)

    def _exec(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        def run(container: Any) -> tuple[int, bytes, bytes]:
            code, (out, err) = container.exec_run(argv, demux=True, workdir=self.cwd)
            return code, out or b"", err or b""

        return self._in_container(run)

    def _in_container(self, action: Callable[[Any], T]) -> T:
        """``action(container)``; a container removed behind our back is recreated once."""
        from docker.errors import APIError, NotFound

        try:
            return self._guard(lambda: action(self.container()))
        except SandboxUnavailable:
            raise
        except SandboxError as exc:
            cause = exc.__cause__
            gone = isinstance(cause, NotFound) or (
                isinstance(cause, APIError) and cause.status_code == 409)
            if not gone:
                raise
        self._container = None
        return self._guard(lambda: action(self.container()))

    @staticmethod
    def _guard(action: Callable[[], T]) -> T:
        """Docker and transport failures become ``SandboxError`` (with the cause kept)."""
        from docker.errors import DockerException
        from requests import RequestException

        try:
            return action()
        except (DockerException, RequestException) as exc:
            explanation = getattr(exc, "explanation", None) or exc
            raise SandboxError(f"docker: {explanation}") from exc
