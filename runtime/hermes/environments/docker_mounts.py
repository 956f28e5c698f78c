"""What a sandbox container mounts: the workspace at the working directory and the
configured volumes, never the Hermes home; all of them nosuid and nodev. The default
workspace is a labelled docker volume, so ``hermes sandbox prune`` can find it.

Only called with the docker SDK already imported by the caller's ``connect()``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.errors import SandboxUnavailable
from hermes.home import Home

if TYPE_CHECKING:
    from hermes.environments.docker_sandbox import SandboxSpec

WORKSPACE_LABEL = "hermes.workspace"
SEAL_CAPABILITIES = ["SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"]
"""What the helper needs: enter another mount namespace (ADMIN, CHROOT), open the
sandbox's (PTRACE: its init may run as another uid), remount (ADMIN)."""


def mounts(spec: SandboxSpec) -> dict[str, dict[str, str]]:
    """The workspace at the working directory plus ``volumes``; never the profile's home."""
    s = spec.settings
    found = {s.workspace or workspace_volume(spec): {"bind": spec.cwd, "mode": "rw"}}
    for entry in s.volumes:
        host, _, rest = entry.partition(":")
        target, _, mode = rest.partition(":")
        if not host or not target.startswith("/") or mode not in ("", "ro", "rw"):
            raise SandboxUnavailable(f"environment.docker.volumes: {entry!r} — expected "
                                     "/host/path:/container/path[:ro]")
        found[host] = {"bind": target, "mode": mode or "rw"}
    for host in found:
        _refuse_home(host, spec.home)
    return found


def workspace_volume(spec: SandboxSpec) -> str:
    """The docker volume holding the workspace when ``workspace`` names no directory."""
    return f"{spec.name}-workspace"


def _refuse_home(host: str, home: Home) -> None:
    if not host.startswith(("/", "~", ".")):
        return  # a named docker volume
    path = Path(os.path.realpath(os.path.expanduser(host)))
    for private in (Path(os.path.realpath(home.path)), Path(os.path.realpath(home.root))):
        if path == private or path in private.parents or private in path.parents:
            raise SandboxUnavailable(
                f"environment.docker: {host} would put the Hermes home {private} into the "
                "sandbox — mount a project directory instead")


def create_workspace_volume(client: Any, spec: SandboxSpec) -> None:
    """Create the workspace volume with labels (docker would make it unlabelled)."""
    if spec.settings.workspace is None:
        client.volumes.create(workspace_volume(spec), labels={
            WORKSPACE_LABEL: "1", "hermes.home": str(spec.home.path),
            "hermes.profile": spec.home.name, "hermes.task": spec.settings.task})


def seal_mounts(client: Any, container: Any, spec: SandboxSpec) -> None:
    """Remount every mount of the running sandbox ``nosuid,nodev``, before a command runs.

    Docker cannot mount a writable bind nosuid (its options stop at ro/rw and
    propagation), so a helper container of the sandbox image joins the sandbox's pid
    namespace and remounts from inside its mount namespace (``nsenter``). The helper has
    no network and only the capabilities a remount needs; the sandbox's processes cannot
    trace it (it holds capabilities they lack)."""
    from docker.errors import DockerException

    script = " && ".join(
        f"mount -o remount,bind,nosuid,nodev{',ro' if how['mode'] == 'ro' else ''} "
        f"{shlex.quote(how['bind'])}" for how in mounts(spec).values())
    try:
        helper = client.containers.create(
            spec.settings.image, ["-t", "1", "-m", "--", "sh", "-c", script],
            entrypoint=["nsenter"], user="0:0", network_mode="none",
            pid_mode=f"container:{container.id}", cap_drop=["ALL"],
            cap_add=SEAL_CAPABILITIES, labels={"hermes.seal": container.name},
            security_opt=["seccomp=unconfined", "apparmor=unconfined"])
    except DockerException as exc:
        raise _unsealed(spec, str(exc)) from exc
    try:
        helper.start()
        if helper.wait(timeout=60)["StatusCode"] != 0:
            raise _unsealed(spec, helper.logs().decode(errors="replace").strip())
    except DockerException as exc:
        raise _unsealed(spec, getattr(exc, "explanation", None) or str(exc)) from exc
    finally:
        helper.remove(force=True)


def _unsealed(spec: SandboxSpec, detail: str) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"environment.docker.image: {spec.settings.image} cannot mount the workspace "
        f"nosuid ({detail.splitlines()[-1] if detail else 'no output'}) — the image needs "
        "sh, nsenter and mount (util-linux); the default image has them "
        "(containers/sandbox/build.sh)")


def workspace_volumes(client: Any, home: Home | None = None) -> list[Any]:
    """The labelled workspace volumes of ``home``'s sandboxes, or of every profile's."""
    labels = [f"{WORKSPACE_LABEL}=1"] + ([f"hermes.home={home.path}"] if home else [])
    return list(client.volumes.list(filters={"label": labels}))


def remove_unused_volumes(client: Any, home: Home | None = None) -> list[str]:
    """Remove the workspace volumes no container uses any more; their names."""
    from docker.errors import APIError, NotFound

    removed = []
    for volume in workspace_volumes(client, home):
        try:
            volume.remove()
        except NotFound:
            continue
        except APIError as exc:
            if exc.status_code == 409:  # in use: its sandbox is still there
                continue
            raise
        removed.append(volume.name)
    return removed
