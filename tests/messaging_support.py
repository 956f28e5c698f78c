"""Profiles with messaging platforms (webhook, telegram) for gateway tests, a fake clock,
and signed webhook deliveries."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from conftest import stop_servers
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall
from gateway_support import Gateway
from hermes.gateway.webhook.signature import sign

WEBHOOK_SECRET = "whsec-test-0123456789abcdef"


@dataclass
class FakeClock:
    """Wall time that moves only when told (pairing expiry, lockouts)."""

    now: float = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def delete_asking_approval(request: RecordedRequest) -> Reply | None:
    """A fake-LLM step for ``delete PATH``: a ``rm -rf PATH`` tool call (dangerous: the chat
    is asked to approve it), then what the tool said; None for other messages."""
    text = request.last_user_text or ""
    if not text.startswith("delete "):
        return None
    if not request.tool_results:
        return Reply(tool_calls=[ToolCall("terminal", {"command": f"rm -rf {text[7:]}"})])
    return Reply(text=f"tool said: {str(request.tool_results[-1].content)[:60]}")


def echo(request: RecordedRequest) -> Reply:
    """A fake-LLM responder: ``re: <the user's message>``."""
    return Reply(text=f"re: {request.last_user_text}")


class Since:
    """The fake LLM's requests since this test began (the fake serves a whole module)."""

    def __init__(self, fake: FakeLLM):
        self.fake = fake
        self.start = len(fake.requests)

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.fake.requests[self.start:]


@contextmanager
def module_home(factory: Any) -> Iterator[tuple[Path, dict[str, str]]]:
    """A user home, Hermes root and clean environment shared by a module's tests (as
    ``conftest``'s ``root`` and ``environ``); its servers are stopped at the end."""
    user = factory.mktemp("user")
    environ = {"HOME": str(user), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8",
               "HERMES_NO_DAEMON": "1"}
    try:
        yield user / ".hermes", environ
    finally:
        stop_servers(user)


def configure_messaging(home: Path, llm_url: str, platforms: dict[str, Any],
                        secrets: dict[str, str] | None = None, **top: Any) -> None:
    """A profile home whose model is the fake LLM, with ``platforms`` enabled (each a
    ``platforms.enabled.<name>`` mapping) and ``secrets`` in its ``.env``."""
    home.mkdir(parents=True, exist_ok=True)
    config = {"defaults": [{"override provider": "custom"}],
              "provider": {"model": "gpt-4o", "api_base": llm_url, "timeout": 30,
                           "max_retries": 0, "retry_backoff": 0},
              "platforms": {"enabled": platforms}, **top}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    lines = {"CUSTOM_API_KEY": "sk-fake-test-key-1234", **(secrets or {})}
    (home / ".env").write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    (home / ".env").chmod(0o600)


def webhook_platform(routes: dict[str, dict[str, Any]], port: int = 0,
                     **settings: Any) -> dict[str, Any]:
    """``platforms.enabled.webhook`` with ``routes`` (each gets the test secret)."""
    full = {name: {"secret": "${secret:TEST_WEBHOOK_SECRET}", **route}
            for name, route in routes.items()}
    return {"kind": "webhook", "settings": {"port": port, "routes": full, **settings}}


def platform_detail(gw: Gateway, name: str, timeout: float = 60) -> str:
    """The status detail of platform ``name`` once it runs (its address)."""
    deadline = time.monotonic() + timeout
    status = gw.home / "gateway.json"
    while time.monotonic() < deadline:
        if gw.proc.poll() is not None:
            raise AssertionError(f"gateway exited {gw.proc.returncode}: {gw.output()}")
        try:
            platform = json.loads(status.read_text())["platforms"][name]
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
            continue
        if platform["state"] == "running":
            return str(platform["detail"])
        if platform["state"] == "failed":
            raise AssertionError(f"{name} failed: {platform['detail']}")
        time.sleep(0.05)
    raise AssertionError(f"{name} not running in {timeout} s: {gw.output()}")


def webhook_url(gw: Gateway, name: str = "webhook") -> str:
    """``http://127.0.0.1:PORT/webhooks/`` of a running gateway's webhook platform."""
    return platform_detail(gw, name).split()[0]


def deliver(url: str, route: str, payload: Any, *, secret: str = WEBHOOK_SECRET,
            timestamp: float | None = None, delivery_id: str | None = None,
            headers: dict[str, str] | None = None, body: bytes | None = None,
            timeout: float = 60) -> httpx.Response:
    """POST a generic-signed delivery (``headers`` replace or add to the signed ones)."""
    raw = body if body is not None else json.dumps(payload).encode()
    stamp = str(int(time.time() if timestamp is None else timestamp))
    sent = {"content-type": "application/json", "x-webhook-timestamp": stamp,
            "x-webhook-signature": sign(secret, raw, stamp),
            "x-webhook-id": delivery_id or uuid.uuid4().hex, **(headers or {})}
    return httpx.post(f"{url}{route}", content=raw, headers=sent, timeout=timeout)
