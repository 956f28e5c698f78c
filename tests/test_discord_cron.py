"""Cron answers reach Discord (tests/fake_discord) without a gateway: ``hermes cron run``
makes the discord adapter for the moment, which sends over REST to the home channel
(``--deliver discord``) or to ``discord:CHANNEL_ID`` and waits out a 429's retry_after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused
from fake_discord import FakeDiscord, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from messaging_support import configure_messaging

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gcron0.fake-discord-cron-token-0123456789"
HOME, OTHER = 234567890123456789, 345678901234567890


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=f"Done: {(request.last_user_text or '').splitlines()[-1]}")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as fake:
        yield fake


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with serving(TOKEN) as fake:
        yield fake


@pytest.fixture
def profile(root: Path, llm: FakeLLM, discord: FakeDiscord) -> Path:
    configure_messaging(root, llm.openai_base_url, {"discord": {
        "kind": "discord", "token": "${secret:DISCORD_BOT_TOKEN}", "allowed_users": ["1"],
        "home_channel": str(HOME), "settings": {"api_base": discord.api_base}}},
        {"DISCORD_BOT_TOKEN": TOKEN})
    return root


def added(hermes, *args: str) -> str:
    return ok(hermes("cron", "add", *args)).split()[2]


def test_cron_delivers_to_the_home_channel_and_to_a_channel(hermes, profile: Path,
                                                           discord: FakeDiscord) -> None:
    job = added(hermes, "every 1d", "Summarise the backups", "--deliver", "discord")
    discord.fail("POST", f"channels/{HOME}/messages", 429, "You are being rate limited.",
                 retry_after=1.0)
    out = ok(hermes("cron", "run", job))
    assert f"job {job} (Summarise the backups): ok, delivered to discord:{HOME}" in out
    assert discord.texts(HOME) == ["Done: Summarise the backups"]
    refused, delivered = discord.of("POST", f"channels/{HOME}/messages")
    assert (refused.status, delivered.status) == (429, 200)
    assert delivered.at - refused.at >= 0.9
    other = added(hermes, "every 1d", "Count the tickets", "--deliver", f"discord:{OTHER}")
    assert f"delivered to discord:{OTHER}" in ok(hermes("cron", "run", other))
    assert discord.texts(OTHER) == ["Done: Count the tickets"]
    assert discord.sent(OTHER)[0].body["allowed_mentions"] == {"parse": []}
    assert discord.of("PUT", "/commands") == []  # slash commands: the gateway's business
    someone = added(hermes, "every 1d", "Remind me", "--deliver", "discord:@4242")
    assert "delivered to discord:@4242" in ok(hermes("cron", "run", someone))
    assert discord.texts(FakeDiscord.dm_channel(4242)) == ["Done: Remind me"]
    [opened] = discord.of("POST", "users/@me/channels")
    assert opened.body == {"recipient_id": 4242}


def test_a_channel_id_that_is_no_number_is_refused(hermes, profile: Path) -> None:
    config = profile / "config.yaml"
    before = config.read_bytes()
    key = "platforms.enabled.discord.settings.allowed_channels"
    line = refused(hermes("config", "set", key, "general"), key, "not a discord id",
                   "right-click → copy id", "'general'")
    assert "{" not in line  # no template left unfilled
    assert config.read_bytes() == before
