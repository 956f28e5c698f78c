"""The OCI image against a real dockerd: built by containers/build.sh from this checkout.

Marked ``image`` (``pytest -m "not image"`` skips them locally; CI runs them). The
base is the debootstrapped Debian image (no registry here), the model is the fake
LLM on the host's bridge address.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import wait_until
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from image_support import (
    REPO,
    bridge_gateway,
    build_image,
    cached_steps,
    docker,
    health,
    inspect,
    published_port,
    run,
    snapshot,
)

# building the base and the image is part of the first test's setup: minutes, not seconds
pytestmark = [pytest.mark.image, pytest.mark.timeout(1500)]

TAG = "hermes:test"
KEY = "k-test-0123456789abcdef"
LABEL = "hermes.test=image"
BUDGET_MB = 730
"""435 MB before issue 28; its dependencies add ~245 MB (Playwright's Node.js driver ~150 MB,
trafilatura's lxml and dateparser, ddgs's primp), issue 30's chat platforms ~29 MB
(discord.py 8.4, slixmpp 8.4, slack-sdk 4.5, slack-bolt 3.3, pyasn1 3.5, pycares 0.8):
704 MB then. Chromium itself stays out unless `containers/build.sh --browser` (1.6 GB)."""


def git(checkout: Path, *args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=checkout,
                          check=True).stdout.strip()


BUILT: dict[str, str] = {}
"""The commit and its time the session's image was built from (labels are checked
against these: the checkout may move on while the tests run)."""


@pytest.fixture(scope="session")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return snapshot(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="session")
def image(base_image: str, source: Path, built_images: list[str]) -> str:
    BUILT.update(revision=git(source, "rev-parse", "HEAD"),
                 epoch=git(source, "log", "-1", "--format=%ct"))
    built_images.append(TAG)
    BUILT["report"] = build_image(TAG, base_image, source).stdout.strip().splitlines()[-1]
    return TAG


def rfc3339(epoch: str) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def names() -> Iterator[list[str]]:
    """Containers and volumes a test creates, removed afterwards whatever happens."""
    created: list[str] = []
    yield created
    for name in created:
        docker("rm", "-f", "-v", name, check=False)  # -v: its anonymous volumes too
    for name in created:
        # a `run --rm` container docker is still removing holds its volume a moment longer
        wait_until(lambda n=name: docker("volume", "rm", "-f", n, check=False).returncode == 0,
                   60, f"removing volume {name}", interval=0.5)


def unique(prefix: str, names: list[str]) -> str:
    name = f"hermes-test-{prefix}-{uuid.uuid4().hex[:8]}"
    names.append(name)
    return name


def test_version_and_labels(image: str) -> None:
    version = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert version
    assert run(image, "--version").stdout.strip() == f"hermes {version[1]}"
    labels = inspect(image)["Config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == version[1]
    assert labels["org.opencontainers.image.revision"] == BUILT["revision"]
    assert labels["org.opencontainers.image.source"].startswith("https://")
    assert labels["org.opencontainers.image.created"] == rfc3339(BUILT["epoch"])


def test_no_secret_or_build_tool_in_the_image(image: str) -> None:
    config = inspect(image)["Config"]
    assert not [e for e in config["Env"] if e.split("=")[0] in {"SSL_CERT_FILE", "PIP_CERT"}]
    probe = run(image, "-c", "import shutil, os; print([t for t in ('uv', 'gcc', 'cc', 'make') "
                "if shutil.which(t)], os.path.exists('/run/secrets/ca-bundle'), "
                "os.path.exists('/opt/uv'))", options=["--entrypoint", "/opt/hermes/bin/python"])
    assert probe.stdout.strip() == "[] False False", probe.stdout


def test_profiles_persist_in_the_volume(image: str, names: list[str]) -> None:
    volume = unique("vol", names)
    mount = ["-v", f"{volume}:/home/hermes/.hermes"]
    run(image, "profile", "create", "work", options=mount)
    run(image, "profile", "switch", "work", options=mount)
    listing = run(image, "profile", "list", options=mount).stdout
    assert re.search(r"^\*\s+work\b", listing, re.M), listing
    shown = run(image, "config", "show", "agent.max_iterations=7", options=mount).stdout
    assert re.search(r"max_iterations: 7\b", shown), shown


def test_config_layer_mounted_read_only(image: str, tmp_path: Path) -> None:
    layer = tmp_path / "layer"
    (layer / "profiles" / "default").mkdir(parents=True)
    (layer / "config.yaml").write_text("agent:\n  max_iterations: 33\n")
    (layer / "profiles" / "default" / "config.yaml").write_text("display:\n  show_cost: false\n")
    options = ["-v", f"{layer}:/layer:ro", "-e", "HERMES_CONFIG_LAYERS=/etc/hermes/layer:/layer"]
    shown = run(image, "config", "show", options=options).stdout
    assert re.search(r"max_iterations: 33\b", shown) and "show_cost: false" in shown, shown
    # the image's own layer is still under it: the API server listens on all interfaces
    assert "host: 0.0.0.0" in shown
    explained = run(image, "config", "explain", "agent.max_iterations", options=options).stdout
    assert "/layer/config.yaml" in explained, explained


def test_oneshot_against_the_fake_llm_on_the_host(image: str) -> None:
    host = bridge_gateway()
    with FakeLLM(host=host) as llm:
        llm.push(Reply("the container answered"))
        done = run(image, "-z", "say something", "provider=custom",
                   f"provider.api_base=http://{host}:{llm.port}/v1", "provider.model=gpt-4o",
                   options=["-e", "CUSTOM_API_KEY=sk-fake-container"], timeout=120)
        assert "the container answered" in done.stdout, (done.stdout, done.stderr)
        assert llm.requests[0].headers.get("authorization") == "Bearer sk-fake-container"


def test_uid_remap_fixes_ownership_only_when_needed(image: str, names: list[str]) -> None:
    volume = unique("vol", names)
    options = ["-v", f"{volume}:/home/hermes/.hermes", "-e", "HERMES_UID=1234",
               "-e", "HERMES_GID=2345"]
    first = run(image, "profile", "create", "ops", options=options)
    assert "giving /home/hermes/.hermes to 1234:2345" in first.stderr
    second = run(image, "profile", "list", options=options)
    assert "giving" not in second.stderr and "ops" in second.stdout
    owners = run(image, "-c", "stat -c %u:%g /home/hermes/.hermes "
                 "/home/hermes/.hermes/profiles/ops", options=["--entrypoint", "sh", "-v",
                                                              f"{volume}:/home/hermes/.hermes"])
    assert owners.stdout.split() == ["1234:2345", "1234:2345"]
    refused = run(image, "--version", options=["-e", "HERMES_UID=0"], check=False)
    assert refused.returncode == 2 and "does not run as root" in refused.stderr


def test_secret_from_a_file_variable(image: str, tmp_path: Path) -> None:
    secret = tmp_path / "custom_key"
    secret.write_text("sk-from-a-file\n")
    secret.chmod(0o644)
    host = bridge_gateway()
    with FakeLLM(host=host) as llm:
        llm.push(Reply("ok"))
        run(image, "-z", "hi", "provider=custom", "provider.model=gpt-4o",
            f"provider.api_base=http://{host}:{llm.port}/v1",
            options=["-v", f"{secret}:/run/secrets/custom_key:ro",
                     "-e", "CUSTOM_API_KEY_FILE=/run/secrets/custom_key"])
        assert llm.requests[0].headers.get("authorization") == "Bearer sk-from-a-file"
    missing = run(image, "--version", options=["-e", "CUSTOM_API_KEY_FILE=/run/secrets/nope"],
                  check=False)
    assert missing.returncode == 2
    assert missing.stderr.strip() == ("error: CUSTOM_API_KEY_FILE: cannot read /run/secrets/nope"
                                      " — mount the secret there or unset CUSTOM_API_KEY_FILE")


def test_secrets_from_variables_and_files_never_reach_the_model(image: str,
                                                                tmp_path: Path) -> None:
    """`-e API_SERVER_KEY` and a `NAME_FILE` secret of any name: commands get neither in
    their environment (withheld, not merely redacted), and the local sandbox hides
    `/run/secrets`, so `cat` of the mounted file reads nothing."""
    database_url = "postgres://app:db-url-secret-0123456789@db/app"
    secret = tmp_path / "database_url"
    secret.write_text(database_url + "\n")
    secret.chmod(0o644)
    host = bridge_gateway()
    with FakeLLM(host=host) as llm:
        llm.push(Reply(tool_calls=[ToolCall("terminal", {"command": "env"})]),
                 Reply(tool_calls=[ToolCall("terminal", {"command": "cat /run/secrets/db"})]),
                 Reply("done"))
        done = run(image, "-z", "show me", "provider=custom", "provider.model=gpt-4o",
                   f"provider.api_base=http://{host}:{llm.port}/v1",
                   options=["-e", "CUSTOM_API_KEY=sk-fake-container", "-e", f"API_SERVER_KEY={KEY}",
                            "-v", f"{secret}:/run/secrets/db:ro",
                            "-e", "DATABASE_URL_FILE=/run/secrets/db"], timeout=180)
        assert done.stdout.strip() == "done", done.stderr
        results = [str(r.content) for request in llm.requests for r in request.tool_results]
    assert "HOME=" in results[0] and "API_SERVER_KEY" not in results[0]
    assert "DATABASE_URL=" not in results[0]
    assert json.loads(results[-1])["exit_code"] != 0  # cat: Permission denied
    for value in (KEY, database_url, "db-url-secret-0123456789"):
        assert not any(value in r for r in results), value


def test_gateway_health_api_and_graceful_sigterm(image: str, names: list[str]) -> None:
    host = bridge_gateway()
    name = unique("gw", names)
    with FakeLLM(host=host) as llm:
        docker("run", "-d", "--name", name, "--label", LABEL, "-p", "127.0.0.1::8642",
               "--health-interval=1s", "--health-start-period=60s",
               "-e", f"API_SERVER_KEY={KEY}", "-e", "CUSTOM_API_KEY=sk-fake-gw", image,
               "gateway", "run", "provider=custom", f"provider.api_base=http://{host}:{llm.port}/v1",
               "provider.model=gpt-4o", "gateway.shutdown_grace=20")
        wait_until(lambda: health(name) in {"healthy", "exited"}, 90, "the health check")
        assert health(name) == "healthy", docker("logs", name).stderr
        # the gateway runs as the image's user, under tini as PID 1
        processes = docker("top", name, "-eo", "uid,pid,args").stdout.splitlines()[1:]
        init = [p for p in processes if "/usr/bin/tini" in p]  # host pids wrap: any order
        assert len(init) == 1 and init[0].split()[0] == "0", processes
        hermes = [p for p in processes if "gateway run" in p and "tini" not in p]
        assert hermes and all(p.split()[0] == "10000" for p in hermes), processes
        base = f"http://127.0.0.1:{published_port(name)}"
        auth = {"Authorization": f"Bearer {KEY}"}
        assert httpx.get(f"{base}/v1/models", headers=auth).json()["data"][0]["id"] == "default"
        assert httpx.get(f"{base}/v1/models").status_code == 401

        llm.push(Reply("finished after SIGTERM", delay=3))
        answers: list[httpx.Response] = []
        body = {"model": "default", "messages": [{"role": "user", "content": "take your time"}]}
        client = threading.Thread(target=lambda: answers.append(httpx.post(
            f"{base}/v1/chat/completions", json=body, headers=auth, timeout=60)))
        client.start()
        llm.wait_for_requests(1, timeout=30)
        started = time.monotonic()
        docker("kill", "--signal", "TERM", name)
        wait_until(lambda: not inspect(name)["State"]["Running"], 30, "the gateway to stop")
        stopped_in = time.monotonic() - started
        client.join(30)
    assert answers and answers[0].status_code == 200, answers
    assert answers[0].json()["choices"][0]["message"]["content"] == "finished after SIGTERM"
    assert inspect(name)["State"]["ExitCode"] == 0, docker("logs", name).stderr
    assert stopped_in < 20, stopped_in
    assert "hermes gateway: stopped" in docker("logs", name).stderr


def start_gateway(image: str, name: str, volume: str, *args: str,
                  options: tuple[str, ...] = ()) -> None:
    """A detached gateway container on ``volume``, waited for until healthy."""
    docker("run", "-d", "--name", name, "--label", LABEL, "-v", f"{volume}:/home/hermes/.hermes",
           "--health-interval=1s", "--health-start-period=60s", "-e", f"API_SERVER_KEY={KEY}",
           *options, image, "gateway", "run", *args)
    wait_until(lambda: health(name) in {"healthy", "exited"}, 90, "the health check")
    assert health(name) == "healthy", docker("logs", name).stderr


def owner(name: str, path: str) -> str:
    return docker("exec", name, "stat", "-c", "%u:%g %a", path).stdout.strip()


def test_docker_exec_hermes_writes_as_the_service_user(image: str, names: list[str]) -> None:
    """`docker exec C hermes config set ...` (root by default) writes files the gateway
    can read after a restart; a root-owned file is given back at the next start."""
    volume, name = unique("vol", names), unique("gw", names)
    # the provider's key as the README passes it (a gateway without one is refused)
    start_gateway(image, name, volume, options=("-e", "OPENAI_API_KEY=sk-image-0123456789"))
    docker("exec", name, "hermes", "config", "set", "TEST_API_KEY", "sk-exec-0123456789")
    assert owner(name, "/home/hermes/.hermes/.env") == "10000:10000 600"
    # past the wrapper, as root: the entrypoint repairs it when the gateway restarts
    docker("exec", name, "/opt/hermes/bin/hermes", "config", "set", "OTHER_API_KEY", "sk-root")
    assert owner(name, "/home/hermes/.hermes/.env") == "0:0 600"
    docker("restart", "-t", "30", name)
    wait_until(lambda: health(name) in {"healthy", "exited"}, 90, "the health check")
    assert health(name) == "healthy", docker("logs", name).stderr
    assert owner(name, "/home/hermes/.hermes/.env") == "10000:10000 600"


def test_any_uid_runs_with_a_volume_it_owns(image: str, names: list[str],
                                            tmp_path: Path) -> None:
    data = tmp_path / "data"  # a directory the uid owns, bind-mounted
    data.mkdir()
    os.chown(data, 4321, 4321)
    as_4321 = ["--user", "4321:4321", "-v", f"{data}:/home/hermes/.hermes"]
    run(image, "profile", "create", "work", options=as_4321)
    run(image, "-p", "work", "config", "set", "TEST_API_KEY", "sk-uid-0123456789",
        options=as_4321)
    env_file = (data / "profiles" / "work" / ".env").stat()
    assert (env_file.st_uid, env_file.st_mode & 0o777) == (4321, 0o600)
    host = bridge_gateway()
    with FakeLLM(host=host) as llm:
        llm.push(Reply("any uid answered"))
        done = run(image, "-p", "work", "-z", "hi", "provider=custom", "provider.model=gpt-4o",
                   f"provider.api_base=http://{host}:{llm.port}/v1",
                   options=[*as_4321, "-e", "CUSTOM_API_KEY=sk-fake"])
    assert "any uid answered" in done.stdout
    # a named volume, handed to that uid once (README), then used with --user
    volume = unique("vol", names)
    mount = ["-v", f"{volume}:/home/hermes/.hermes"]
    run(image, "--version", options=[*mount, "-e", "HERMES_UID=4321", "-e", "HERMES_GID=4321"])
    assert "default" in run(image, "profile", "list",
                            options=["--user", "4321:4321", *mount]).stdout
    other = ["-v", f"{unique('vol', names)}:/home/hermes/.hermes"]  # still 10000's
    refused = run(image, "profile", "list", options=["--user", "4321:4321", *other],
                  check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("error: /home/hermes/.hermes: not writable by uid 4321")


def test_a_client_container_on_the_gateways_volume_runs_in_its_own_container(
        image: str, names: list[str]) -> None:
    """`docker run -v VOLUME ... -w /src IMAGE -z` beside a gateway on the same volume:
    the gateway's warm server must not run it (its tools would act on the gateway's
    files; /src does not even exist there)."""
    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal", {"command": "hostname; pwd"})])
        return Reply(text=str(request.tool_results[0].content))

    host = bridge_gateway()
    volume, name = unique("vol", names), unique("gw", names)
    with FakeLLM(host=host, fallback=respond, strict=False) as llm:
        provider = ("provider=custom", "provider.model=gpt-4o",
                    f"provider.api_base=http://{host}:{llm.port}/v1")
        start_gateway(image, name, volume, *provider, options=("-e", "CUSTOM_API_KEY=sk-f"))
        wait_until(lambda: docker("exec", name, "test", "-S", "/home/hermes/.hermes/run/"
                                  "daemon.sock", check=False).returncode == 0, 60,
                   "the gateway's warm server")
        done = run(image, "-z", "where am I", *provider, check=False, options=[
            "-v", f"{volume}:/home/hermes/.hermes", "-w", "/src", "--hostname", "the-client",
            "-e", "CUSTOM_API_KEY=sk-f"])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "the-client" in done.stdout and "/src" in done.stdout, done.stdout


def test_the_default_sandbox_image_builds_in_one_command(
        hermes: Any, base_image: str, source: Path, built_images: list[str],
        tmp_path: Path) -> None:
    tag = "hermes-sandbox:test"
    built_images.append(tag)
    report = build_image(tag, base_image, source, script="containers/sandbox/build.sh")
    assert report.stdout.strip().splitlines()[-1].startswith(f"image {tag}: ")
    config = inspect(tag)["Config"]
    assert not config["Entrypoint"]
    created = config["Labels"]["org.opencontainers.image.created"]
    assert created == rfc3339(git(source, "log", "-1", "--format=%ct"))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    command = "git --version && rg --version && grep ' /workspace ' /proc/mounts"

    def respond(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal", {"command": command})])
        return Reply(text=str(request.tool_results[0].content))

    with FakeLLM(fallback=respond, strict=False) as llm:
        answer = hermes("-z", "look around", "provider=custom", "provider.model=gpt-4o",
                        f"provider.api_base={llm.openai_base_url}", "environment=docker",
                        f"environment.docker.image={tag}",
                        f"environment.docker.workspace={workspace}",
                        env={"CUSTOM_API_KEY": "sk-fake"})
        sandboxes = docker("ps", "-aq", "--filter", f"label=hermes.home={tmp_path}/user/.hermes")
        docker("rm", "-f", *sandboxes.stdout.split(), check=False)
    assert answer.exit_code == 0, answer.stderr
    assert "git version" in answer.stdout and "ripgrep" in answer.stdout
    assert "nosuid" in answer.stdout.split(" /workspace ")[1].split()[1]


def test_health_check_passes_outside_gateway_mode(image: str) -> None:
    done = run(image, "-I", "/usr/local/lib/hermes/healthcheck.py",
               options=["--entrypoint", "/opt/hermes/bin/python"], check=False)
    assert done.returncode == 0 and done.stdout.strip() == "healthy"


def test_size_budget(image: str) -> None:
    size_mb = inspect(image)["Size"] / 1e6
    assert size_mb <= BUDGET_MB, f"{size_mb:.0f} MB > {BUDGET_MB} MB"


def installed_set(image: str) -> tuple[str, str]:
    """Hashes of the installed distributions (name==version) and of site-packages' files."""
    script = ("import importlib.metadata as m, pathlib, sys\n"
              "print('\\n'.join(sorted(f\"{d.metadata['Name']}=={d.version}\" "
              "for d in m.distributions())))\n"
              "print('--')\n"
              "site = pathlib.Path(sys.prefix, 'lib', 'python3.11', 'site-packages')\n"
              "print('\\n'.join(sorted(str(p.relative_to(site)) for p in site.rglob('*') "
              "if p.is_file() and p.suffix != '.pyc')))\n")
    out = run(image, "-c", script, options=["--entrypoint", "/opt/hermes/bin/python"]).stdout
    freeze, listing = out.split("--\n")
    return (hashlib.sha256(freeze.encode()).hexdigest(),
            hashlib.sha256(listing.encode()).hexdigest())


def test_two_builds_install_the_same_package_set(image: str, base_image: str,
                                                source: Path) -> None:
    second = "hermes:test-rebuild"
    try:
        rebuilt = build_image(second, base_image, source, no_cache=True)
        # Docker 20.10 may answer a --no-cache build from its cache: then nothing was built
        assert cached_steps(rebuilt) == [], "the second build did not run its steps"
        assert installed_set(second) == installed_set(image)
    finally:
        docker("rmi", "-f", second, check=False)


def compose_command() -> list[str]:
    if docker("compose", "version", check=False).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail("neither `docker compose` nor docker-compose is installed (apt-get install "
                "docker-compose)")


def test_compose_starts_two_profiles_gateways(image: str, tmp_path: Path) -> None:
    from gateway_support import free_port

    secrets = tmp_path / "secrets"
    secrets.mkdir()
    keys = {"work": "k-work-0123456789abcdef", "research": "k-research-0123456789abcdef"}
    for profile, key in keys.items():
        (secrets / f"{profile}.env").write_text("OPENAI_API_KEY=sk-test-compose\n")
        (secrets / f"{profile}_api_key").write_text(key + "\n")
        (secrets / f"{profile}_api_key").chmod(0o444)
    ports = {"work": free_port(), "research": free_port()}
    project = f"hermestest{uuid.uuid4().hex[:8]}"
    env = {"HERMES_IMAGE": image, "HERMES_SECRETS_DIR": str(secrets),
           "HERMES_WORK_PORT": str(ports["work"]), "HERMES_RESEARCH_PORT": str(ports["research"]),
           "COMPOSE_PROJECT_NAME": project, "PATH": os.environ["PATH"]}
    compose = [*compose_command(), "-f", str(REPO / "containers" / "compose.yaml")]

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*compose, *args], env=env, capture_output=True, text=True,
                              timeout=180, check=False)

    try:
        up = call("up", "-d")
        assert up.returncode == 0, up.stderr

        def answered(profile: str) -> bool:
            try:
                response = httpx.get(f"http://127.0.0.1:{ports[profile]}/v1/models",
                                     headers={"Authorization": f"Bearer {keys[profile]}"})
            except httpx.HTTPError:
                return False
            return response.status_code == 200 and response.json()["data"][0]["id"] == profile

        for profile in keys:
            wait_until(lambda p=profile: answered(p), 90, f"the {profile} gateway")
        models = httpx.get(f"http://127.0.0.1:{ports['research']}/v1/models",
                           headers={"Authorization": f"Bearer {keys['research']}"}).json()
        assert models["data"][0]["hermes"]["model"] == "gpt-4o-mini"  # its profile's layer
        wrong = httpx.get(f"http://127.0.0.1:{ports['work']}/v1/models",
                          headers={"Authorization": f"Bearer {keys['research']}"})
        assert wrong.status_code == 401
        # compose v1 and v2 name containers differently; both label them the same way
        service = inspect(docker("ps", "-q", "--filter",
                                 f"label=com.docker.compose.project={project}", "--filter",
                                 "label=com.docker.compose.service=work").stdout.strip())
        host = service["HostConfig"]
        assert host["ReadonlyRootfs"] and host["CapDrop"] == ["ALL"]
        assert "no-new-privileges:true" in host["SecurityOpt"]
        assert host["PortBindings"]["8642/tcp"][0]["HostIp"] == "127.0.0.1"
        assert service["Config"]["User"] == "10000:10000"
    finally:
        down = call("down", "-v", "--timeout", "40")
        assert down.returncode == 0, down.stderr


DRIVE_CHROMIUM = """
import shutil
from playwright.sync_api import sync_playwright
from hermes.web.addresses import AddressPolicy
from hermes.web.proxy import chromium_args, playwright_proxy, start_guard_proxy
with start_guard_proxy(AddressPolicy()) as guard, sync_playwright() as playwright:
    browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                         args=chromium_args(guard), proxy=playwright_proxy(guard))
    page = browser.new_page()
    page.set_content("<h1>rendered</h1>")
    print(page.inner_text("h1"), browser.version)
    answer = page.goto("http://127.0.0.1:8642/health")
    print(answer.status, page.inner_text("body"))
    browser.close()
"""


def python_in(image: str, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by the image's Python as the service user."""
    return run(image, "-c", code, options=["--user", "10000:10000", "-e", "HOME=/tmp",
                                           "--entrypoint", "/opt/hermes/bin/python"],
               timeout=180)


def test_playwrights_driver_runs_in_the_image(image: str) -> None:
    """Every browser backend (cdp too) talks to the browser through Playwright's Node.js,
    which needs libatomic1."""
    done = python_in(image, "from playwright.sync_api import sync_playwright\n"
                            "p = sync_playwright().start(); print('driver up'); p.stop()")
    assert done.stdout.strip() == "driver up", done.stderr


@pytest.fixture(scope="session")
def browser_image(base_image: str, source: Path, built_images: list[str], image: str) -> str:
    tag = "hermes:test-browser"
    built_images.append(tag)
    BUILT["browser report"] = build_image(tag, base_image, source,
                                          browser=True).stdout.strip().splitlines()[-1]
    return tag


def test_the_browser_image_drives_chromium_through_the_address_guard(
        image: str, browser_image: str) -> None:
    assert run(image, "sh", "-c", "command -v chromium", options=["--entrypoint", ""],
               check=False).returncode != 0  # the default image carries no browser
    done = python_in(browser_image, DRIVE_CHROMIUM)
    rendered, blocked = done.stdout.strip().splitlines()
    assert rendered.startswith("rendered "), done.stderr
    assert blocked.startswith("403 blocked: 127.0.0.1") and "loopback" in blocked
    sizes = [inspect(tag)["Size"] / 1e6 for tag in (image, browser_image)]
    print(f"image {sizes[0]:.0f} MB, with --browser {sizes[1]:.0f} MB")
