"""Several platforms in one real gateway process: one that cannot start is shown failed in
`hermes gateway status` while the others serve; a webhook's answer goes to a Telegram
chat; webhooks share the API server's listener. A chat platform whose server is down when
the gateway starts (the fake Bot API, stopped) is shown reconnecting with the reason and
the next attempt, tried again with backoff, and served once the server is up; refused
credentials (a 403 for the bot token) stay failed, and the server is not asked again."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM
from gateway_support import KEY, Gateway, free_port, gateway
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
FIRST_RETRY = 1.0
"""The longest wait before the first retry (``MessagingAdapter.backoff``'s ``initial``)."""


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


def platform(gw: Gateway, name: str = "telegram") -> dict[str, Any]:
    try:
        return dict(json.loads((gw.home / "gateway.json").read_text())["platforms"][name])
    except (OSError, ValueError, KeyError):
        return {}


def status_line(environ: dict[str, str], name: str = "telegram") -> str:
    """Platform ``name``'s line of ``hermes gateway status``, through the real CLI."""
    done = hermes(environ, "gateway", "status")
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith(f"  {name}:"))


def test_a_bot_api_down_at_start_is_retried_then_served(
        root: Path, environ: dict[str, str], llm: FakeLLM, bot: FakeBotAPI) -> None:
    bot.stop()  # its port stays reserved for start()
    configure_messaging(root, llm.openai_base_url, {"telegram": telegram(bot)},
                        {"TELEGRAM_BOT_TOKEN": TOKEN})
    with gateway(environ, root, ready=False) as gw:
        said = wait_until(lambda: "serving" in gw.output() and gw.output(), 60, "serving")
        assert "default/telegram not connected (ConnectionError: " in str(said)
        wait_until(lambda: platform(gw).get("retry_at"), 60, "a next attempt in the status")
        line = status_line(environ)
        assert line.startswith("  telegram: reconnecting ConnectionError: "), line
        assert " — next attempt in " in line and line.endswith(" s") and TOKEN not in line
        bot.start()
        bot.push("are you up?", user_id=42)
        [answer] = wait_until(lambda: bot.texts(42), 90, "the answer")  # type: ignore[misc]
        assert check_markdown_v2(answer) == (None, "re: are you up?")
        # gateway.json is rewritten every STATUS_EVERY (2 s): the answer can come first
        wait_until(lambda: platform(gw).get("state") == "running", 30, "the status: running")
        assert status_line(environ) == "  telegram: running @hermes_test_bot via " + bot.url
        log = (root / "logs" / "gateway.log").read_text()
    assert "platform unreachable at start; retrying with backoff" in log
    assert '"event": "connected"' in log and TOKEN not in log + gw.output()


def test_a_bot_token_refused_at_start_stays_failed_without_asking_again(
        root: Path, environ: dict[str, str], llm: FakeLLM, bot: FakeBotAPI) -> None:
    bot.fail("getMe", 403, "Forbidden: this bot may not be used", times=100)
    configure_messaging(root, llm.openai_base_url, {
        "telegram": telegram(bot), "webhook": webhook_platform({"ping": {"prompt": "{q}"}})},
        {"TELEGRAM_BOT_TOKEN": TOKEN, "TEST_WEBHOOK_SECRET": WEBHOOK_SECRET})
    with gateway(environ, root, ready=False) as gw:
        url = webhook_url(gw)
        said = wait_until(lambda: "serving" in gw.output() and gw.output(), 60, "serving")
        assert "default/telegram failed: " in str(said) and "rejected the bot token" in str(said)
        failed_by = time.time()
        # two status writes later, well past when a first retry would have come
        wait_until(lambda: json.loads((root / "gateway.json").read_text())["updated_at"]
                   > failed_by + 2 * FIRST_RETRY, 30, "the gateway to serve on")
        assert deliver(url, "ping", {"q": "still there?"}).json()["answer"] == "re: still there?"
        assert platform(gw)["state"] == "failed" and platform(gw).get("retry_at") is None
        assert len(bot.of("getMe")) == 1
        assert status_line(environ).startswith(f"  telegram: failed {bot.url} rejected the "
                                               "bot token")
