"""Cron answers reach Telegram (the fake Bot API, tests/fakebot): from a real gateway's
tick through its running telegram platform, and from ``hermes cron run`` and ``hermes cron
tick`` without a gateway, through an adapter made for the moment (a 429's retry_after
honoured). A ``[SILENT]`` answer is sent nowhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, wait_until
from fakebot import FakeBotAPI, check_markdown_v2, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import gateway
from messaging_support import configure_messaging, platform_detail

TOKEN = "123456789:AAH-cron-test-token-0123456789abcdefg"
HOME_CHAT, OTHER_CHAT = 4242, -1009


def answer(request: RecordedRequest) -> Reply:
    prompt = (request.last_user_text or "").splitlines()[-1]
    return Reply(text="[SILENT]" if "quiet" in prompt else f"Done: {prompt}")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as fake:
        yield fake


@pytest.fixture
def bot() -> Iterator[FakeBotAPI]:
    with serving(TOKEN) as api:
        yield api


@pytest.fixture
def profile(root: Path, llm: FakeLLM, bot: FakeBotAPI) -> Path:
    configure_messaging(root, llm.openai_base_url, {"telegram": {
        "kind": "telegram", "token": "${secret:TELEGRAM_BOT_TOKEN}", "allowed_users": ["1"],
        "home_channel": HOME_CHAT,
        "settings": {"base_url": bot.url, "poll_timeout": 2, "send_rate": 50}}},
        {"TELEGRAM_BOT_TOKEN": TOKEN})
    return root


def added(hermes, *args: str) -> str:
    return ok(hermes("cron", "add", *args)).split()[2]


def make_due(root: Path, *ids: str) -> None:
    """As if these jobs' time had come."""
    path = root / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    for job in data["jobs"]:
        if job["id"] in ids:
            job["next_run"] = "2000-01-01T00:00:00+00:00"
    path.write_text(json.dumps(data))


def texts(bot: FakeBotAPI, chat: int) -> list[str]:
    return [check_markdown_v2(text)[1] for text in bot.texts(chat)]


def test_run_and_tick_without_a_gateway_send_through_telegram(hermes, profile: Path,
                                                              bot: FakeBotAPI) -> None:
    job = added(hermes, "every 1d", "Summarise the backups", "--deliver", "telegram")
    bot.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    out = ok(hermes("cron", "run", job))
    assert f"job {job} (Summarise the backups): ok, delivered to telegram:{HOME_CHAT}" in out
    assert texts(bot, HOME_CHAT) == ["Done: Summarise the backups"]
    assert len(bot.of("sendMessage")) == 2  # the 429, then the retry
    count = added(hermes, "every 1d", "Count the tickets", "--deliver", f"telegram:{OTHER_CHAT}")
    quiet = added(hermes, "every 1d", "Stay quiet unless something broke", "--deliver",
                  "telegram")
    make_due(profile, count, quiet)
    out = ok(hermes("cron", "tick"))
    assert f"delivered to telegram:{OTHER_CHAT}" in out and "): silent" in out
    assert texts(bot, OTHER_CHAT) == ["Done: Count the tickets"]
    assert texts(bot, HOME_CHAT) == ["Done: Summarise the backups"]  # nothing more there


def test_the_gateway_tick_delivers_through_its_running_platform(
        hermes, environ: dict[str, str], profile: Path, bot: FakeBotAPI) -> None:
    jobs = [added(hermes, "every 1h", "Check the disks", "--deliver", "telegram"),
            added(hermes, "every 1h", "Stay quiet today", "--deliver", "telegram")]
    make_due(profile, *jobs)  # due when the gateway starts: its first tick runs them
    with gateway(environ, profile, ready=False) as gw:
        platform_detail(gw, "telegram")
        wait_until(lambda: texts(bot, HOME_CHAT), 120, "the job's answer in Telegram")
        wait_until(lambda: all(j["last_status"] in ("ok", "silent") for j in json.loads(
            (profile / "cron" / "jobs.json").read_text())["jobs"]), 60, "both runs recorded")
    assert texts(bot, HOME_CHAT) == ["Done: Check the disks"]
    statuses = [j["last_status"] for j in json.loads(
        (profile / "cron" / "jobs.json").read_text())["jobs"]]
    assert statuses == ["ok", "silent"]
