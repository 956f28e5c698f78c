"""The API server's front door (issue 25, points 11 and 14), through the real CLI and a real
`hermes gateway run`: a key is always required (enabling the API server, or starting a
gateway without one, creates it in the profile's .env and says how to read it); a Host
that is not the server's, a foreign Origin and a body that is not JSON are refused before
the agent; a sandboxed command of the same profile cannot drive the gateway's agent; and
`/health` without the key says only the status."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import KEY, Gateway, configure, gateway
from messaging_support import (
    WEBHOOK_SECRET,
    configure_messaging,
    deliver,
    webhook_platform,
    webhook_url,
)
from nobody_support import nobody_prefix
from sandbox_support import backends

INNER = "inner request from the sandbox"
CHAT = {"model": "default", "messages": [{"role": "user", "content": "hi"}]}


def responder(command: Callable[[], str]) -> Callable[[RecordedRequest], Reply]:
    """The model: on "go", one terminal call running ``command()``; after it, "done";
    any other prompt (the sandbox's own request, should it get through) is answered."""

    def respond(request: RecordedRequest) -> Reply:
        if request.last_user_text == "go" and not request.tool_results:
            return Reply(tool_calls=[ToolCall("terminal", {"command": command()})])
        return Reply(text="done" if request.tool_results else f"ran: {request.last_user_text}")

    return respond


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda request: Reply(text="fine"), strict=False) as fake:
        yield fake


@pytest.fixture
def served(root: Path, environ: dict[str, str], llm: FakeLLM) -> Iterator[Gateway]:
    configure(root, llm.openai_base_url)
    with gateway(environ, root) as gw:
        yield gw


def env_value(env_file: Path, name: str) -> str | None:
    for line in env_file.read_text().splitlines():
        if line.startswith(f"{name}="):
            return line.split("=", 1)[1]
    return None


def key_note(text: str) -> str:
    """The one line that says the key was created."""
    [line] = [line for line in text.splitlines() if "API_SERVER_KEY" in line]
    return line


def read_with(note: str, environ: dict[str, str]) -> str:
    """Run the command the note gives for reading the key; what it prints."""
    command = note.split("read it with `", 1)[1].split("`", 1)[0]
    done = subprocess.run(["sh", "-c", command], env=environ, capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0, (command, done.stderr)
    return done.stdout.strip()


# --- point 11: a key, always ------------------------------------------------------------


def test_enabling_the_api_server_creates_a_key_once(root: Path, environ: dict[str, str],
                                                    hermes_subprocess: Any) -> None:
    done = hermes_subprocess("config", "set", "platforms", "api_server")
    assert done.returncode == 0, done.stderr
    env_file = root / ".env"
    key = env_value(env_file, "API_SERVER_KEY")
    assert key is not None and len(key) >= 32
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert key not in done.stdout + done.stderr
    note = key_note(done.stderr)
    assert str(env_file) in note and read_with(note, environ) == key
    again = hermes_subprocess("config", "set", "platforms", "api_server")
    assert again.returncode == 0 and "API_SERVER_KEY" not in again.stderr
    assert env_value(env_file, "API_SERVER_KEY") == key  # kept, not replaced


def test_a_key_that_is_set_is_left_alone(root: Path, environ: dict[str, str],
                                         hermes_subprocess: Any) -> None:
    assert hermes_subprocess("config", "set", "API_SERVER_KEY", KEY).returncode == 0
    done = hermes_subprocess("config", "set", "platforms", "api_server")
    assert done.returncode == 0 and "API_SERVER_KEY" not in done.stderr
    assert env_value(root / ".env", "API_SERVER_KEY") == KEY


def test_a_gateway_started_without_a_key_creates_one(root: Path, environ: dict[str, str],
                                                     llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url, key=None)
    with gateway(environ, root) as gw:
        key = env_value(root / ".env", "API_SERVER_KEY")
        assert key is not None and len(key) >= 32
        note = key_note(gw.output())
        assert key not in gw.output() and read_with(note, environ) == key
        url = f"{gw.url}/v1/chat/completions"
        assert httpx.post(url, json=CHAT, timeout=30).status_code == 401
        answered = httpx.post(url, json=CHAT, timeout=30,
                              headers={"Authorization": f"Bearer {key}"})
        assert answered.status_code == 200, answered.text
    assert key not in (root / "logs" / "gateway.log").read_text()


def test_a_cross_origin_text_post_never_reaches_the_agent(served: Gateway, llm: FakeLLM) -> None:
    url = f"{served.url}/v1/chat/completions"
    auth = {"Authorization": f"Bearer {KEY}"}
    body = json.dumps(CHAT)
    refusals = [
        ({"Host": "evil.example", "Origin": "http://evil.example",
          "Content-Type": "text/plain"}, 403, "Host"),
        ({"Host": f"evil.example:{served.port}", "Content-Type": "application/json"}, 403,
         "Host"),
        ({"Origin": "http://evil.example", "Content-Type": "application/json"}, 403, "Origin"),
        ({"Origin": "null", "Content-Type": "application/json"}, 403, "Origin"),
        ({"Content-Type": "text/plain"}, 415, "application/json"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
        ({}, 415, "application/json"),
    ]
    for headers, status, fragment in refusals:
        for key in ({}, auth):  # with the key or without it: refused all the same
            refused = httpx.post(url, content=body, headers={**key, **headers}, timeout=30)
            assert refused.status_code == status, (headers, refused.text)
            assert fragment in refused.json()["error"]["message"]
    assert llm.requests == []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"])
def test_loopback_names_and_the_servers_own_origin_are_served(served: Gateway, llm: FakeLLM,
                                                              host: str) -> None:
    own = f"{host}:{served.port}"
    answered = httpx.post(f"{served.url}/v1/chat/completions", json=CHAT, timeout=30,
                          headers={"Authorization": f"Bearer {KEY}", "Host": own,
                                   "Origin": f"http://{own}",
                                   "Content-Type": "application/json; charset=utf-8"})
    assert answered.status_code == 200, answered.text
    assert httpx.get(f"{served.url}/health", headers={"Host": host}, timeout=5).status_code == 200


def test_a_listener_takes_the_names_in_allowed_hosts(root: Path, environ: dict[str, str],
                                                     llm: FakeLLM) -> None:
    configure(root, llm.openai_base_url, platforms__enabled__api_server__settings__allowed_hosts=[
        "hermes.example"])
    with gateway(environ, root) as gw:
        for host, status in (("hermes.example", 200), ("hermes.example:443", 200),
                             ("other.example", 403)):
            got = httpx.get(f"{gw.url}/v1/models", timeout=5, headers={
                "Host": host, "Authorization": f"Bearer {KEY}"})
            assert got.status_code == status, (host, got.text)


USERS = ["root", pytest.param("nobody", marks=pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to run the gateway as nobody"))]


@contextmanager
def gateway_home(user: str, root: Path, environ: dict[str, str]
                 ) -> Iterator[tuple[Path, dict[str, str], Path, list[str]]]:
    """``(root, environ, workspace, command prefix)`` for a gateway run by ``user``: as
    nobody, a home and workspace it owns under /var/tmp."""
    if user == "root":
        workspace = root.parent / "work"
        workspace.mkdir()
        yield root, environ, workspace, []
        return
    prefix = nobody_prefix()
    base = Path(tempfile.mkdtemp(prefix="hermes-nobody-", dir="/var/tmp"))
    try:
        (base / "user").mkdir()
        (base / "work").mkdir()
        yield base / "user" / ".hermes", environ | {"HOME": str(base / "user")}, \
            base / "work", prefix
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("backend", backends())
def test_a_sandboxed_command_cannot_drive_the_gateways_agent(
        root: Path, environ: dict[str, str], backend: str, user: str) -> None:
    """The model runs curl against the API server from inside the sandbox, without the key
    and with ``$API_SERVER_KEY`` (absent from a command's environment): both 401."""
    if shutil.which("curl") is None:
        pytest.skip("needs curl")
    port: list[int] = []

    def curl() -> str:
        post = (f"-X POST http://127.0.0.1:{port[0]}/v1/chat/completions -H 'Content-Type: "
                "application/json' -d '{\"model\": \"default\", \"messages\": [{\"role\": "
                f"\"user\", \"content\": \"{INNER}\"}}]}}'")
        return (f"curl -s -o /dev/null -w 'plain=%{{http_code}} ' {post}; curl -s -o /dev/null "
                f"-w 'env=%{{http_code}}' -H \"Authorization: Bearer $API_SERVER_KEY\" {post}")

    with FakeLLM(fallback=responder(curl), strict=False) as llm, \
            gateway_home(user, root, environ) as (home, env, workspace, as_user):
        configure(home, llm.openai_base_url, key=None, approvals__mode="off",
                  environment__cwd=str(workspace), environment__local__sandbox__backend=backend)
        for path in [workspace.parent, *workspace.parent.rglob("*")] if as_user else []:
            os.chown(path, 65534, 65534)
        with gateway(env, home, as_user=as_user) as gw:
            port.append(gw.port)
            key = env_value(home / ".env", "API_SERVER_KEY")
            answered = httpx.post(f"{gw.url}/v1/chat/completions", timeout=60,
                                  headers={"Authorization": f"Bearer {key}"},
                                  json={"model": "default",
                                        "messages": [{"role": "user", "content": "go"}]})
            assert answered.status_code == 200, answered.text
        requests = llm.requests
    [result] = [r for request in requests for r in request.tool_results]
    output = json.loads(result.content)["output"]
    assert "plain=401" in output and "env=401" in output, output
    assert not [r for r in requests if r.last_user_text == INNER]
    assert key and key not in json.dumps([r.body for r in requests])


def test_webhooks_take_any_host_but_no_foreign_origin(root: Path, environ: dict[str, str],
                                                      llm: FakeLLM) -> None:
    """Webhooks are signed, and reached through a public name (often a proxy's): no Host
    rule; but no sender sends an Origin, so a foreign one (a web page) is refused."""
    configure_messaging(root, llm.openai_base_url, {"webhook": webhook_platform(
        {"ping": {"prompt": "{q}"}})}, {"TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        url = webhook_url(gw)
        public = deliver(url, "ping", {"q": "by name"}, headers={"host": "hooks.example.com"})
        assert public.status_code == 200 and public.json()["status"] == "done", public.text
        page = deliver(url, "ping", {"q": "from a page"},
                       headers={"origin": "http://evil.example"})
        assert page.status_code == 403 and "Origin" in page.json()["error"]["message"]
    assert [r.last_user_text for r in llm.requests] == ["by name"]


# --- point 14: /health without the key --------------------------------------------------


def test_health_without_the_key_says_only_the_status(served: Gateway) -> None:
    bare = httpx.get(f"{served.url}/health", timeout=5)
    assert bare.status_code == 200 and bare.json() == {"status": "ok"}
    wrong = httpx.get(f"{served.url}/health", timeout=5,
                      headers={"Authorization": "Bearer not-the-key-0123456789"})
    assert wrong.json() == {"status": "ok"}
    full = httpx.get(f"{served.url}/health", timeout=5,
                     headers={"Authorization": f"Bearer {KEY}"}).json()
    assert full["status"] == "ok" and full["profiles"]["default"]["ready"] is True


def test_the_image_health_check_still_passes(served: Gateway, root: Path,
                                             environ: dict[str, str]) -> None:
    """containers/healthcheck.py asks /health without a key, through 127.0.0.1."""
    check = Path(__file__).resolve().parents[1] / "containers" / "healthcheck.py"
    done = subprocess.run([sys.executable, "-I", str(check)], capture_output=True, text=True,
                          timeout=30, env={**environ, "HERMES_HOME": str(root),
                                           "PATH": os.environ.get("PATH", "")}, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "healthy", done.stdout
