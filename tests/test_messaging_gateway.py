"""Several platforms in one real gateway process: one that cannot start is shown failed in
`hermes gateway status` while the others serve; a webhook's answer goes to a Telegram
chat; webhooks share the API server's listener."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM
from gateway_support import KEY, free_port, gateway
from messaging_support import (
    WEBHOOK_SECRET,
    configure_messaging,
    deliver,
    echo,
    platform_detail,
    webhook_platform,
    webhook_url,
)

TOKEN = "123456789:AAH-test-token-0123456789abcdefghij"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=echo, strict=False) as fake:
        yield fake


@pytest.fixture
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def telegram(api: FakeBotAPI) -> dict[str, object]:
    return {"kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}", "allowed_users": ["42"],
            "settings": {"base_url": api.url, "poll_timeout": 2, "send_rate": 50}}


def hermes(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hermes", *args], env=environ, text=True,
                          capture_output=True, timeout=120)


def test_a_platform_that_cannot_start_is_reported_while_the_others_serve(
        root: Path, environ: dict[str, str], llm: FakeLLM, bot: FakeBotAPI) -> None:
    wrong = "987654321:AAH-wrong-token-zyxwvutsrqponmlkjihg"
    configure_messaging(root, llm.openai_base_url, {
        "telegram": telegram(bot), "webhook": webhook_platform({"ping": {"prompt": "{q}"}})},
        {"TELEGRAM_BOT_TOKEN": wrong, "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        url = webhook_url(gw)
        said = wait_until(lambda: "serving" in gw.output() and gw.output(), what="serving")
        assert "default/telegram failed:" in str(said) and "rejected the bot token" in str(said)
        status = hermes(environ, "gateway", "status")
        assert status.returncode == 0, status.stderr
        lines = {line.split(":")[0].strip(): line for line in status.stdout.splitlines()}
        assert "failed" in lines["telegram"] and "rejected the bot token" in lines["telegram"]
        assert "hermes config set TELEGRAM_BOT_TOKEN" in lines["telegram"]
        assert "running" in lines["webhook"]
        answered = deliver(url, "ping", {"q": "still there?"})
        assert answered.status_code == 200 and answered.json()["answer"] == "re: still there?"
        everything = [gw.output(), status.stdout, (root / "gateway.json").read_text(),
                      (root / "logs" / "gateway.log").read_text()]
    assert not any(wrong in text for text in everything)


def test_a_webhook_answer_is_delivered_to_a_telegram_chat(
        root: Path, environ: dict[str, str], llm: FakeLLM, bot: FakeBotAPI) -> None:
    configure_messaging(root, llm.openai_base_url, {
        "telegram": telegram(bot),
        "webhook": webhook_platform({"alerts": {"prompt": "Alert: {alert.name}",
                                                "deliver": "telegram:42:9"}})},
        {"TELEGRAM_BOT_TOKEN": TOKEN, "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        platform_detail(gw, "telegram")
        accepted = deliver(webhook_url(gw), "alerts", {"alert": {"name": "disk full"}})
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["deliver"] == "telegram:42:9"
        [sent] = wait_until(lambda: bot.sent(42), what="the answer in the chat")
    error, plain = check_markdown_v2(sent.params["text"])
    assert error is None and plain == "re: Alert: disk full"
    assert str(sent.params["message_thread_id"]) == "9"


def test_webhooks_share_the_api_servers_listener(root: Path, environ: dict[str, str],
                                                 llm: FakeLLM) -> None:
    port = free_port()
    configure_messaging(root, llm.openai_base_url, {
        "api_server": {"kind": "api_server", "token": "${secret:API_SERVER_KEY}",
                       "settings": {"port": port}},
        "webhook": webhook_platform({"ping": {"prompt": "{q}"}}, port=port)},
        {"API_SERVER_KEY": KEY, "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        assert webhook_url(gw) == f"http://127.0.0.1:{port}/webhooks/"
        platform_detail(gw, "api_server")
        hooked = deliver(f"http://127.0.0.1:{port}/webhooks/", "ping", {"q": "by webhook"})
        assert hooked.json()["answer"] == "re: by webhook"
        api = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60,
                         headers={"Authorization": f"Bearer {KEY}"},
                         json={"model": "default",
                               "messages": [{"role": "user", "content": "by api"}]})
        assert api.json()["choices"][0]["message"]["content"] == "re: by api"
        info = json.loads((root / "gateway.json").read_text())
        assert set(info["platforms"]) == {"api_server", "webhook"}
