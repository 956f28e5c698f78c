"""The README's messaging section runs as written, in a real shell: a Telegram bot (the fake
Bot API, with the README's token), pairing with the code the bot sent, and a signed
webhook whose answer is delivered to the Telegram chat. Test-only steps point the
profile at the fakes and a free port; the README's commands are otherwise unchanged
(the placeholder code is replaced by the one the bot sent)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM
from gateway_support import free_port, gateway
from messaging_support import echo, platform_detail
from readme_support import bash, code_blocks, section

SECTION = "## Messaging: Telegram, webhooks, pairing"
TOKEN = "123456:ABC-token-from-BotFather"
OWNER, STRANGER = 123456789, 555000111


def readme_blocks() -> list[str]:
    return code_blocks(section(SECTION))


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=echo, strict=False) as fake:
        yield fake


@pytest.fixture
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


def test_the_messaging_section_runs_as_written(environ: dict[str, str], root: Path,
                                               tmp_path: Path, llm: FakeLLM,
                                               bot: FakeBotAPI) -> None:
    telegram, pairing, webhook, sender = readme_blocks()
    port = free_port()
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, telegram, tmp_path)
    bash(environ, webhook + '\nprintf %s "$secret" > secret', tmp_path)  # kept for the sender
    home = root / "profiles" / "work"
    for key, value in (("provider", "custom"), ("provider.model", "gpt-4o"),
                       ("provider.api_base", llm.openai_base_url),
                       ("CUSTOM_API_KEY", "sk-fake-test-key-1234"),
                       ("platforms.enabled.telegram.settings.base_url", bot.url),
                       ("platforms.enabled.telegram.settings.poll_timeout", "2"),
                       ("platforms.enabled.webhook.settings.port", str(port))):
        bash(environ, f"hermes -p work config set {key} '{value}'", tmp_path)
    with gateway(environ, home, ["-p", "work"], ready=False) as gw:
        platform_detail(gw, "telegram")
        platform_detail(gw, "webhook")
        _pairing(environ, pairing, bot, tmp_path)
        out = bash(environ, 'secret=$(cat secret)\n' +
                   sender.replace("127.0.0.1:8642", f"127.0.0.1:{port}"), tmp_path)
        assert '"status": "accepted"' in out and '"deliver": "telegram:123456789"' in out
        [sent] = wait_until(lambda: bot.sent(OWNER), what="the alert's answer in Telegram")
    assert check_markdown_v2(sent.params["text"]) == (
        None, "re: Alert disk full on db1: what should I check first?")


def _pairing(environ: dict[str, str], commands: str, bot: FakeBotAPI, cwd: Path) -> None:
    bot.push("hello?", user_id=STRANGER, username="stranger")
    [offer] = wait_until(lambda: bot.texts(STRANGER), what="the pairing code")
    code = re.search(r"pairing approve telegram ([A-Z0-9]{8})", offer.replace("\\", ""))
    assert code is not None, offer
    listing, approve, revoke, unlock = commands.strip().splitlines()
    assert f"{STRANGER}" in bash(environ, listing, cwd)
    assert "paired telegram user 555000111" in bash(
        environ, approve.replace("K7M2PQ9X", code[1]), cwd)
    bot.push("now?", user_id=STRANGER)
    wait_until(lambda: len(bot.texts(STRANGER)) == 2, what="the answer once paired")
    assert "revoked telegram user 555000111" in bash(environ, revoke, cwd)
    assert "pairing on telegram" in bash(environ, unlock, cwd)
