"""The docker environment against the real dockerd: commands and file tools in the
sandbox, its limits, reuse by label, recovery, timeout, cancellation, the reaper."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_until, write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.environments.docker import DockerEnvironment
from hermes.environments.docker_mounts import workspace_volumes
from hermes.environments.docker_sandbox import connect, idle_seconds, reap_idle, sandboxes
from hermes.errors import SandboxUnavailable
from hermes.home import home_from_path
from hermes.tools.context import ToolContext
from nobody_support import nobody_prefix
from test_tools_support import call, make_registry

pytestmark = pytest.mark.usefixtures("docker_daemon")


@pytest.fixture
def docker(docker_daemon: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A docker client; every sandbox (and workspace volume) of this test run's homes is
    removed afterwards."""
    client = connect({})
    yield client
    remove_sandboxes(client, str(tmp_path_factory.getbasetemp()) + "/")
    client.close()


def remove_sandboxes(client: Any, home_prefix: str) -> None:
    for container in sandboxes(client):
        if container.labels.get("hermes.home", "").startswith(home_prefix):
            container.remove(force=True)
    for volume in workspace_volumes(client):
        if volume.attrs["Labels"].get("hermes.home", "").startswith(home_prefix):
            volume.remove(force=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def runtime(root: Path, environ: dict[str, str], image: str, workspace: Path,
            *overrides: str) -> Runtime:
    home = home_from_path(root).ensure()
    settings = ["environment=docker", f"environment.docker.image={image}",
                f"environment.docker.workspace={workspace}", *overrides]
    return build_runtime(home, compose_config(home, environ, settings).config, environ)


def sandbox_of(rt: Runtime) -> DockerEnvironment:
    environment = rt.container.environment()
    assert isinstance(environment, DockerEnvironment)
    return environment


def context(rt: Runtime, environ: dict[str, str], **options: Any) -> ToolContext:
    return ToolContext.for_session(rt.home, rt.container.environment(), "session-1",
                                   environ=environ, **options)


def test_commands_and_file_tools_act_inside_the_container(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path,
        docker: Any) -> None:
    tools = make_registry(["file", "terminal"])
    with runtime(root, environ, base_image, workspace) as rt:
        ctx = context(rt, environ)
        shell = call(tools, ctx, "terminal", {"command": "pwd; cat /etc/hostname; echo oops >&2"})
        container = sandbox_of(rt).container()
        assert shell["exit_code"] == 0
        lines = shell["output"].splitlines()  # stderr is merged, in arrival order
        assert lines[0] == "/workspace" and container.id.startswith(lines[1]) and "oops" in lines
        written = call(tools, ctx, "write_file", {"path": "src/app.py", "content": "x = 1\n"})
        assert written == {"path": "/workspace/src/app.py", "created": True,
                           "bytes_written": 6, "lines": 1}
        assert (workspace / "src" / "app.py").read_text() == "x = 1\n"  # the mount
        assert "x = 2" in call(tools, ctx, "patch", {"path": "src/app.py", "old_string": "1",
                                                    "new_string": "2"})["diff"]
        read = call(tools, ctx, "read_file", {"path": "/etc/debian_version"})
        assert read["content"].startswith("     1|12")  # the sandbox's file, not ours
        found = call(tools, ctx, "search_files", {"pattern": "x = [0-9]"})
        assert found["matches"] == [{"path": "src/app.py", "line": 1, "text": "x = 2"}]
        names = call(tools, ctx, "search_files", {"pattern": "*.py", "target": "files"})
        assert names["files"] == ["src/app.py"]
        assert "does not exist" in call(tools, ctx, "read_file", {"path": "nope.txt"})["error"]
        refused = call(tools, ctx, "write_file", {"path": "~/.ssh/authorized_keys",
                                                  "content": "k"})
        assert "credential file" in refused["error"]


def test_limits_network_none_and_passed_variables_are_in_force(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path,
        docker: Any) -> None:
    (root / ".env").parent.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text("PROJECT_TOKEN=tok-123\nOPENAI_API_KEY=sk-not-passed\n")
    overrides = ("environment.docker.user=root",  # the package manager's capabilities
                 "environment.docker.cpus=0.5", "environment.docker.memory=256m",
                 "environment.docker.pids_limit=64", "environment.docker.read_only=true",
                 "environment.docker.env=[PROJECT_TOKEN]")
    with runtime(root, environ, base_image, workspace, *overrides) as rt:
        sandbox = sandbox_of(rt)
        result = sandbox.run("cat /proc/net/dev | tail -n +3 | cut -d: -f1; "
                             "grep CapEff /proc/self/status; env; touch /etc/x; "
                             "touch /tmp/t /workspace/w && echo writable")
        host = sandbox.container().attrs["HostConfig"]
    interfaces = [line.strip() for line in result.output.splitlines() if line.strip() == "lo"
                  or line.startswith("eth")]
    assert interfaces == ["lo"]
    assert "CapEff:\t00000000000000cb" in result.output  # chown, dac_override, fowner, set[ug]id
    assert "PROJECT_TOKEN=tok-123" in result.output and "OPENAI" not in result.output
    assert "Read-only file system" in result.output and "writable" in result.output
    assert (host["NetworkMode"], host["NanoCpus"], host["Memory"], host["PidsLimit"]) == (
        "none", 500_000_000, 256 * 1024 * 1024, 64)
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    assert host["ReadonlyRootfs"] is True and "/tmp" in host["Tmpfs"]
    assert host["Binds"] == [f"{workspace}:/workspace:rw"]  # and never the home


def test_passed_variables_follow_the_secrets_settings(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path,
        docker: Any, tmp_path: Path) -> None:
    """``environment.docker.env`` is resolved as every other secret of the runtime:
    ``secrets.precedence`` and ``secrets.environment_files`` included."""
    (root / ".env").parent.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text("PROJECT_TOKEN=from-dotenv\n")
    env_file = tmp_path / "deploy.env"
    env_file.write_text("DEPLOY_KEY=from-environment-file\n")
    env_file.chmod(0o600)
    overrides = ("environment.docker.env=[PROJECT_TOKEN,DEPLOY_KEY]",
                 "secrets.precedence=environment",
                 f"secrets.environment_files=[{env_file}]")
    process = environ | {"PROJECT_TOKEN": "from-the-process"}
    with runtime(root, process, base_image, workspace, *overrides) as rt:
        output = sandbox_of(rt).run("env").output
    assert "PROJECT_TOKEN=from-the-process" in output, output
    assert "DEPLOY_KEY=from-environment-file" in output, output


@pytest.mark.parametrize("mount", ["workspace", "volume"])
def test_the_profile_home_is_never_mounted(root: Path, environ: dict[str, str],
                                           base_image: str, workspace: Path, docker: Any,
                                           mount: str) -> None:
    if mount == "workspace":
        rt = runtime(root, environ, base_image, root / "projects")
    else:  # the user's home holds the Hermes root
        rt = runtime(root, environ, base_image, workspace,
                     f"environment.docker.volumes=['{root.parent}:/home/me:ro']")
    with pytest.raises(SandboxUnavailable, match="would put the Hermes home"):
        rt.start()
    rt.close()
    assert not [c for c in sandboxes(docker) if c.labels["hermes.home"] == str(root)]


def test_reused_by_label_across_runtimes_and_recreated_when_removed(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path,
        docker: Any) -> None:
    with runtime(root, environ, base_image, workspace) as first:
        ctx = context(first, environ)  # the session is recorded in the labels
        assert sandbox_of(first).run("echo kept > /tmp/state").exit_code == 0
        created = sandbox_of(first).container()
    assert created.labels["hermes.session"] == "session-1"
    assert created.labels["hermes.task"] == "default" and ctx.session_id == "session-1"
    with runtime(root, environ, base_image, workspace) as second:
        sandbox = sandbox_of(second)
        assert sandbox.run("cat /tmp/state").output == "kept\n"
        assert sandbox.container().id == created.id
        docker.containers.get(created.id).remove(force=True)  # behind our back
        again = sandbox.run("cat /tmp/state 2>&1; echo alive")
        assert again.output.endswith("alive\n") and "kept" not in again.output
        assert sandbox.container().id != created.id
    with runtime(root, environ, base_image, workspace, "environment.docker.task=other") as rt:
        assert sandbox_of(rt).container().id != sandbox.container().id  # one per task
    with runtime(root, environ, base_image, workspace, "environment.docker.memory=300m") as rt:
        changed = sandbox_of(rt).container()  # other settings: made again from them
        assert changed.id != sandbox.container().id
        assert changed.attrs["HostConfig"]["Memory"] == 300 * 1024 * 1024
    assert [c.id for c in sandboxes(docker) if c.labels["hermes.task"] == "default"
            and c.labels["hermes.home"] == str(root)] == [changed.id]


def test_timeout_and_cancellation_stop_the_command_not_the_container(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path,
        docker: Any) -> None:
    def running(sandbox: DockerEnvironment, word: str) -> bool:
        listing = sandbox.run("cat /proc/[0-9]*/cmdline | tr '\\0' ' '").output
        return word in listing

    with runtime(root, environ, base_image, workspace) as rt:
        sandbox = sandbox_of(rt)
        started = time.monotonic()
        timed = sandbox.run("echo first; sleep 300 & sleep 301; echo never", timeout=1)
        assert timed.timed_out and timed.exit_code == 124 and time.monotonic() - started < 10
        assert timed.output == "first\n"  # what streamed before the kill is kept
        assert not running(sandbox, "sleep 30")  # the command and its children are gone
        stop_at = time.monotonic() + 1
        cancelled = sandbox.run("echo go; sleep 302",
                                cancelled=lambda: time.monotonic() > stop_at)
        assert cancelled.cancelled and cancelled.exit_code == 130 and cancelled.output == "go\n"
        assert not running(sandbox, "sleep 302")
        sandbox.container().reload()
        assert sandbox.container().status == "running"
        assert sandbox.run("echo still here").output == "still here\n"


def test_the_reaper_removes_only_idle_sandboxes(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path,
        docker: Any) -> None:
    def make(task: str, idle: float) -> Any:
        rt = runtime(root, environ, base_image, workspace, f"environment.docker.task={task}",
                     f"environment.docker.idle_timeout={idle}")
        with rt:
            sandbox = sandbox_of(rt)
            sandbox.run("true")
            return sandbox.container()

    # Each runtime's start reaps this profile's idle sandboxes, so the busy one is
    # busy before the next starts, and the idle one comes last.
    busy = make("busy", 1)
    busy.exec_run(["sleep", "60"], detach=True)
    fresh, idle = make("fresh", 3600), make("idle", 1)
    wait_until(lambda: (idle_seconds(docker, idle) or 0) > 1.5, what="the sandbox to idle")
    assert idle_seconds(docker, busy) is None  # a command runs there: never idle
    assert reap_idle(docker) == [idle.name]
    remaining = {c.name for c in sandboxes(docker)}
    assert idle.name not in remaining and {busy.name, fresh.name} <= remaining


def test_sandbox_list_and_prune(hermes: Callable[..., Any], root: Path, environ: dict[str, str],
                                base_image: str, workspace: Path, docker: Any) -> None:
    rt = runtime(root, environ, base_image, workspace, "environment.docker.idle_timeout=1")
    with rt:
        sandbox_of(rt).run("true")
        name = sandbox_of(rt).container().name
    listed = hermes("sandbox", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    [entry] = [e for e in json.loads(listed.stdout) if e["name"] == name]
    assert (entry["profile"], entry["task"], entry["status"]) == ("default", "default",
                                                                 "running")
    wait_until(lambda: (idle_seconds(docker, docker.containers.get(name)) or 0) > 1.5,
               what="the sandbox to idle")
    pruned = hermes("sandbox", "prune")
    assert pruned.exit_code == 0 and f"removed {name}" in pruned.stdout
    assert name not in {c.name for c in sandboxes(docker)}


def test_unreachable_daemon_and_missing_image_are_one_line(
        hermes: Callable[..., Any], root: Path, environ: dict[str, str], base_image: str,
        workspace: Path, docker: Any) -> None:
    gone = hermes("sandbox", "list", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert gone.exit_code == 2 and gone.stderr.count("\n") == 1
    assert "does not answer" in gone.stderr and "DOCKER_HOST" in gone.stderr
    missing = hermes("-z", "hi", "environment=docker",
                     "environment.docker.image=hermes-no-such-image:1",
                     "provider.api_base=http://127.0.0.1:9", env={"OPENAI_API_KEY": "sk-fake"})
    assert missing.exit_code == 2 and missing.stderr.count("\n") == 1
    assert missing.stderr.startswith("error: environment.docker.image: image "
                                     "hermes-no-such-image:1 is not on this docker host — "
                                     "build it (containers/sandbox/build.sh")


@pytest.mark.parametrize("approvals", ["true", "false"])
def test_approval_in_the_sandbox_follows_config(root: Path, environ: dict[str, str],
                                                base_image: str, workspace: Path, docker: Any,
                                                approvals: str) -> None:
    (workspace / "build").mkdir()
    tools = make_registry(["terminal"])
    with runtime(root, environ, base_image, workspace,
                 f"environment.docker.approvals={approvals}") as rt:
        result = call(tools, context(rt, environ), "terminal", {"command": "rm -rf build"})
    if approvals == "true":  # the default: asked as anywhere else, and nobody can answer
        assert result["error"].startswith("refused: this command needs the user's approval")
        assert (workspace / "build").exists()
    else:
        assert result["exit_code"] == 0 and not (workspace / "build").exists()


def test_background_jobs_run_in_the_sandbox(root: Path, environ: dict[str, str],
                                            base_image: str, workspace: Path,
                                            docker: Any) -> None:
    tools = make_registry(["terminal", "process"])
    with runtime(root, environ, base_image, workspace) as rt:
        ctx = context(rt, environ)
        job = call(tools, ctx, "terminal", {"command": "echo one; cat /etc/hostname",
                                            "background": True})
        done = call(tools, ctx, "process", {"action": "wait", "id": job["process_id"]})
        assert done["status"] == "exited 0" and done["new_output"].startswith("one\n")
        assert sandbox_of(rt).container().id.startswith(done["new_output"].split()[1])
        long = call(tools, ctx, "terminal", {"command": "sleep 303", "background": True})
        assert call(tools, ctx, "process", {"action": "poll", "id": long["process_id"]})[
            "status"] == "running"
        killed = call(tools, ctx, "process", {"action": "kill", "id": long["process_id"]})
        assert killed["status"] != "running"
        assert "sleep 303" not in sandbox_of(rt).run(
            "cat /proc/[0-9]*/cmdline | tr '\\0' ' '").output


def test_commands_run_as_the_invoking_user_on_a_nosuid_workspace(base_image: str,
                                                                 docker: Any) -> None:
    """A setuid copy of a shell planted in the workspace belongs to the user who ran
    hermes (never root), and the workspace is mounted nosuid,nodev in the sandbox."""
    uid, switch = _an_unprivileged_user()
    user_home = Path(tempfile.mkdtemp(prefix="hermes-docker-user-"))  # reachable by uid
    workspace = user_home / "workspace"
    workspace.mkdir()
    command = ("cp /bin/sh planted && chmod u+s planted && id -u && echo HOME=$HOME && "
               "grep ' /workspace ' /proc/mounts")

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal", {"command": command})])
        return Reply(text=str(request.tool_results[0].content))

    try:
        with FakeLLM(fallback=respond, strict=False) as llm:
            write_fake_provider(user_home / ".hermes", llm.openai_base_url)
            subprocess.run(["chown", "-R", f"{uid}:{uid}", str(user_home)], check=True)
            done = subprocess.run(
                [*switch, sys.executable, "-m", "hermes", "-z", "plant it", "environment=docker",
                 f"environment.docker.image={base_image}", "environment.docker.approvals=false",
                 f"environment.docker.workspace={workspace}"],
                env={"HOME": str(user_home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
                     "HERMES_NO_DAEMON": "1"}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        planted = (workspace / "planted").stat()
        assert planted.st_uid == uid and planted.st_mode & 0o4000  # setuid to nobody new
        assert f"{uid}\\nHOME=/tmp" in done.stdout, done.stdout
        options = done.stdout.split(" /workspace ")[1].split()[1].split(",")
        assert {"nosuid", "nodev", "rw"} <= set(options), done.stdout
    finally:
        remove_sandboxes(docker, str(user_home))
        shutil.rmtree(user_home, ignore_errors=True)


def _an_unprivileged_user() -> tuple[int, list[str]]:
    """Who runs hermes in that test: this user, or (as root) nobody with access to the
    docker socket, so that "the invoking user" is not root."""
    if os.getuid() != 0:
        return os.getuid(), []
    socket_path = Path("/var/run/docker.sock")
    if os.environ.get("DOCKER_HOST") or not socket_path.exists():
        pytest.skip("needs the local docker socket to run hermes as another user")
    nobody_prefix()  # skips (fails on CI) when nobody cannot run this checkout's hermes
    group = socket_path.stat().st_gid
    return 65534, ["setpriv", "--reuid=65534", "--regid=65534", f"--groups={group}", "--"]


def test_an_image_with_an_entrypoint_still_runs_commands(
        root: Path, environ: dict[str, str], base_image: str, workspace: Path, docker: Any,
        tmp_path: Path) -> None:
    image = "hermes-test-entrypoint:latest"
    (tmp_path / "Dockerfile").write_text(f'FROM {base_image}\nENTRYPOINT ["/bin/false"]\n')
    docker.images.build(path=str(tmp_path), tag=image, rm=True)
    try:
        with runtime(root, environ, image, workspace) as rt:
            result = sandbox_of(rt).run("echo still here")
        assert (result.exit_code, result.output) == (0, "still here\n")
    finally:
        remove_sandboxes(docker, str(root))
        docker.images.remove(image, force=True)


def test_prune_removes_workspace_volumes(hermes: Callable[..., Any], root: Path,
                                         environ: dict[str, str], base_image: str,
                                         docker: Any) -> None:
    def sandbox(task: str, idle_timeout: float) -> str:
        home = home_from_path(root).ensure()
        settings = ["environment=docker", f"environment.docker.image={base_image}",
                    f"environment.docker.task={task}",
                    f"environment.docker.idle_timeout={idle_timeout}"]
        with build_runtime(home, compose_config(home, environ, settings).config,
                           environ) as rt:
            assert sandbox_of(rt).run("echo kept > file").exit_code == 0
            return str(sandbox_of(rt).container().name)

    def volumes() -> set[str]:
        return {v.name for v in workspace_volumes(docker, home_from_path(root))}

    busy = sandbox("busy", 3600)
    idle = sandbox("idle", 1)  # last: a runtime's start reaps the idle ones
    assert volumes() == {f"{idle}-workspace", f"{busy}-workspace"}
    wait_until(lambda: (idle_seconds(docker, docker.containers.get(idle)) or 0) > 1.5,
               what="the sandbox to idle")
    pruned = hermes("sandbox", "prune")
    assert pruned.exit_code == 0, pruned.stderr
    assert f"removed {idle}" in pruned.stdout and f"removed volume {idle}-workspace" in \
        pruned.stdout
    assert volumes() == {f"{busy}-workspace"}  # its sandbox still uses it
    forced = hermes("sandbox", "prune", "--force")
    assert f"removed volume {busy}-workspace" in forced.stdout and volumes() == set()


def test_a_stopped_sandbox_is_made_again_sealed(root: Path, environ: dict[str, str],
                                                base_image: str, workspace: Path,
                                                docker: Any) -> None:
    """Restarting it would run its own (maybe replaced) binaries to seal it again."""
    with runtime(root, environ, base_image, workspace) as rt:
        first = sandbox_of(rt).container()
        assert sandbox_of(rt).run("echo kept > file").exit_code == 0
    docker.containers.get(first.id).stop(timeout=0)
    with runtime(root, environ, base_image, workspace) as rt:
        again = sandbox_of(rt).container()
        result = sandbox_of(rt).run("cat file; grep ' /workspace ' /proc/mounts")
    assert again.id != first.id and again.name == first.name
    assert result.output.startswith("kept\n") and "nosuid" in result.output
    assert [c.name for c in sandboxes(docker) if c.labels["hermes.home"] == str(root)] == \
        [first.name]  # no provisional container left behind
