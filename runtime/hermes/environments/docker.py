"""Run commands in a docker container (the docker SDK is imported lazily)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes.config.schema import DockerSettings
from hermes.environments.base import CommandResult, Environment
from hermes.errors import SandboxError
from hermes.home import Home


class DockerEnvironment(Environment):
    """One sandbox container per runtime, created on the first command."""

    kind = "docker"

    def __init__(self, home: Home, settings: DockerSettings, cwd: str | None, timeout: float):
        self.home = home
        self.settings = settings
        self.cwd = cwd or "/workspace"
        self.timeout = timeout
        self._client: Any = None
        self._container: Any = None

    def _ensure_container(self) -> Any:
        if self._container is not None:
            return self._container
        import docker
        from docker.errors import DockerException

        try:
            self._client = docker.from_env()
            self._container = self._client.containers.run(
                self.settings.image, ["sleep", "infinity"], detach=True, auto_remove=True,
                network_disabled=not self.settings.network, mem_limit=self.settings.memory,
                working_dir=self.cwd, environment={"HERMES_HOME": "/hermes"},
                labels={"hermes.home": str(self.home.path)},
            )
        except DockerException as exc:
            raise SandboxError(f"docker: {exc}") from exc
        return self._container

    def run(self, command: str, *, timeout: float | None = None,
            cancelled: Callable[[], bool] | None = None) -> CommandResult:
        container = self._ensure_container()
        limit = int(timeout or self.timeout)
        code, output = container.exec_run(["timeout", str(limit), "/bin/sh", "-c", command],
                                          workdir=self.cwd)
        text = output.decode(errors="replace") if output else ""
        return CommandResult(code, text, timed_out=code == 124)

    def stop(self) -> None:
        if self._container is not None:
            try:
                self._container.remove(force=True)
            finally:
                self._container = None
                self._client.close()
