"""Sandbox containers: one per (profile, task), found by labels, reaped when idle.

Only called with the docker SDK already imported by the caller's
``connect()``; management commands that never touch docker never import it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hermes.config.schema import DockerSettings
from hermes.environments.docker_mounts import create_workspace_volume, mounts, seal_mounts
from hermes.errors import SandboxError, SandboxUnavailable
from hermes.home import Home

LABEL = "hermes.sandbox"
USED_MARKER = "/tmp/.hermes-used"
"""Touched by every command: idleness is measured from its mtime."""
DAEMON_FIX = ("start it (systemctl start docker, or dockerd) or point DOCKER_HOST at a "
              "running daemon")


def connect(environ: Mapping[str, str]) -> Any:
    """A docker client for the daemon ``environ`` names (DOCKER_HOST), checked to answer."""
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(environment=dict(environ), timeout=60)
        client.ping()
    except DockerException as exc:
        where = environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        raise SandboxUnavailable(f"the docker daemon at {where} does not answer — "
                                 f"{DAEMON_FIX}") from exc
    return client


@dataclass(frozen=True)
class SandboxSpec:
    """Which container a runtime's sandbox is, and how to create it."""

    home: Home
    settings: DockerSettings
    cwd: str
    environment: dict[str, str]
    session: str = ""

    @property
    def name(self) -> str:
        digest = hashlib.sha256(str(self.home.path).encode()).hexdigest()[:10]
        return f"hermes-{self.home.name}-{self.settings.task}-{digest}"

    @property
    def user(self) -> str:
        """Who the sandbox's commands run as: ``uid:gid`` (``host``: this process's)."""
        if self.settings.user == "host":
            return f"{os.getuid()}:{os.getgid()}"
        return "0:0" if self.settings.user == "root" else self.settings.user

    def fingerprint(self) -> str:
        """A digest of everything the container was created from (secrets only hashed)."""
        made_from = [self.settings.model_dump(mode="json", exclude={"approvals"}), self.cwd,
                     sorted(self.environment.items()), self.user]
        return hashlib.sha256(json.dumps(made_from, sort_keys=True).encode()).hexdigest()[:16]

    def labels(self) -> dict[str, str]:
        return {LABEL: "1", "hermes.profile": self.home.name, "hermes.home": str(self.home.path),
                "hermes.task": self.settings.task, "hermes.session": self.session,
                "hermes.idle_timeout": str(self.settings.idle_timeout),
                "hermes.config": self.fingerprint()}

    def identity(self) -> list[str]:
        """Label filters that find this sandbox again from any process."""
        return [f"hermes.home={self.home.path}", f"hermes.task={self.settings.task}"]


def find_sandbox(client: Any, spec: SandboxSpec) -> Any | None:
    """The running sandbox container of ``spec``, or None. One made from other settings
    (image, limits, mounts, variables) is removed, to be recreated; so is a stopped one:
    sealing it again would run binaries its commands may have replaced with the
    helper's privileges (its workspace volume stays)."""
    found = [c for c in client.containers.list(all=True, filters={"label": spec.identity()})
             if c.name == spec.name]  # not one still being sealed under another name
    if not found:
        return None
    container = found[0]
    if container.labels.get("hermes.config") != spec.fingerprint() or \
            container.status != "running":
        remove_quietly(container)
        return None
    return container


def require_image(client: Any, image: str) -> None:
    """Nothing is pulled: a sandbox image must already be on the docker host."""
    from docker.errors import ImageNotFound

    try:
        client.images.get(image)
    except ImageNotFound as exc:
        raise SandboxUnavailable(
            f"environment.docker.image: image {image} is not on this docker host — build it "
            "(containers/sandbox/build.sh in the Hermes repository builds the default, "
            "hermes-sandbox:latest) or set environment.docker.image to a local image") from exc


def create_sandbox(client: Any, spec: SandboxSpec) -> Any:
    """A new sandbox container, sealed under a provisional name that no other process
    looks for, then given its own; when another process was faster, that one."""
    from docker.errors import APIError

    require_image(client, spec.settings.image)
    create_workspace_volume(client, spec)
    try:
        # The image's own ENTRYPOINT (a server, a wrapper) would replace the idle process
        # that keeps the sandbox up: the container would exit and every command with it.
        container = client.containers.create(
            spec.settings.image, entrypoint=["sleep", "infinity"], **_options(spec),
            name=f"{spec.name}-new-{secrets.token_hex(4)}")
    except APIError as exc:
        raise SandboxError(f"creating the sandbox failed: {exc.explanation or exc}") from exc
    start_sealed(client, container, spec)
    try:
        container.rename(spec.name)
    except APIError as exc:
        remove_quietly(container)
        if exc.status_code == 409 and (other := find_sandbox(client, spec)) is not None:
            return other
        raise SandboxError(f"creating the sandbox failed: {exc.explanation or exc}") from exc
    container.reload()
    return container


def start_sealed(client: Any, container: Any, spec: SandboxSpec) -> None:
    """Start ``container`` with its mounts nosuid; one that cannot be is removed."""
    from docker.errors import DockerException

    try:
        container.start()
        seal_mounts(client, container, spec)
    except (DockerException, SandboxUnavailable):
        remove_quietly(container)
        raise


def _options(spec: SandboxSpec) -> dict[str, Any]:
    s = spec.settings
    root = spec.user.split(":")[0] == "0"
    # A uid the image has no account for gets HOME=/ from docker, which it cannot write.
    environment = spec.environment if root else {"HOME": "/tmp", **spec.environment}
    return {
        "labels": spec.labels(), "init": True, "detach": True,
        "user": spec.user, "working_dir": spec.cwd, "environment": environment,
        "network_mode": s.network, "mem_limit": s.memory, "pids_limit": s.pids_limit,
        "nano_cpus": int(s.cpus * 1e9) if s.cpus else None,
        "cap_drop": ["ALL"], "cap_add": list(s.cap_add),
        "security_opt": ["no-new-privileges"], "read_only": s.read_only,
        "tmpfs": {"/tmp": "rw,nosuid,nodev,mode=1777"},
        "volumes": mounts(spec),
    }


def last_used(container: Any) -> float:
    """When a command last started in ``container`` (its start time if none ran)."""
    code, out = container.exec_run(["stat", "-c", "%Y", USED_MARKER])
    if code == 0 and out.strip().isdigit():
        return float(out.strip())
    started = container.attrs["State"]["StartedAt"]
    return datetime.fromisoformat(started[:26].rstrip("Z") + "+00:00").timestamp()


def is_busy(client: Any, container: Any) -> bool:
    """Whether a command is running in ``container`` right now."""
    return any(client.api.exec_inspect(exec_id)["Running"]
               for exec_id in container.attrs.get("ExecIDs") or [])


def sandboxes(client: Any, home: Home | None = None) -> list[Any]:
    """The Hermes sandbox containers of ``home``, or of every profile."""
    labels = [f"{LABEL}=1"] + ([f"hermes.home={home.path}"] if home else [])
    return list(client.containers.list(all=True, filters={"label": labels}))


def idle_seconds(client: Any, container: Any, now: float | None = None) -> float | None:
    """How long ``container`` has been unused; None while a command runs in it."""
    container.reload()
    if container.status == "running" and is_busy(client, container):
        return None
    if container.status != "running":
        return float("inf")
    return (now or time.time()) - last_used(container)


def reap_idle(client: Any, home: Home | None = None) -> list[str]:
    """Remove sandboxes (of ``home``, else all) unused for longer than their own
    ``idle_timeout``; their names."""
    removed = []
    for container in sandboxes(client, home):
        limit = float(container.labels.get("hermes.idle_timeout") or "inf")
        idle = idle_seconds(client, container)
        if idle is not None and idle > limit:
            remove_quietly(container)
            removed.append(container.name)
    return removed


def remove_quietly(container: Any) -> None:
    """Remove ``container``; one that is already gone is fine."""
    from docker.errors import NotFound

    with contextlib.suppress(NotFound):
        container.remove(force=True)
