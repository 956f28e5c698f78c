"""Setting the slack platform up, through the real CLI against the fake Slack
(tests/fake_slack): its settings refused in one line when wrong, ``hermes doctor``'s
``auth.test``, and cron answers delivered to a channel and to the ``home_channel`` without
a gateway (the Web API only: no Socket Mode connection is opened, so the running
gateway's events are not shared with it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, wait_until
from fake_slack import FakeSlack, serving
from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import Gateway, gateway
from messaging_support import configure_messaging
from test_cron_telegram import make_due

BOT_TOKEN = "xoxb-4444-5555-setup-bot-token"
APP_TOKEN = "xapp-1-A0HERMES-6666-setup-app-token"
HOME, OTHER = "C0HOME", "C0OTHER"


def answer(request: RecordedRequest) -> Reply:
    return Reply(text=f"Done: {(request.last_user_text or '').splitlines()[-1]}")


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=answer, strict=False) as llm:
        yield llm


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with serving(BOT_TOKEN, APP_TOKEN) as fake:
        yield fake


@pytest.fixture
def profile(root: Path, fake_llm: FakeLLM, slack: FakeSlack) -> Path:
    slack.failures.clear()
    configure_messaging(root, fake_llm.openai_base_url, {"slack": {
        "kind": "slack", "token": "${secret:SLACK_BOT_TOKEN}", "allowed_users": ["U0ADA"],
        "home_channel": HOME,
        "settings": {"app_token": "${secret:SLACK_APP_TOKEN}", "api_base": slack.url}}},
        {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN})
    return root


def test_doctor_checks_the_bot_token_with_auth_test(hermes, profile: Path,
                                                    slack: FakeSlack) -> None:
    before = len(slack.of("auth.test"))
    out = ok(hermes("doctor"))
    row = next(line for line in out.splitlines() if "platform slack" in line)
    assert "ok" in row and "bot hermes in Hermes Test" in row
    assert len(slack.of("auth.test")) == before + 1
    assert slack.of("auth.test")[-1].token == BOT_TOKEN
    env = (profile / ".env").read_text().replace(BOT_TOKEN, "xoxb-revoked-token")
    (profile / ".env").write_text(env)
    failed = hermes("doctor")
    assert failed.exit_code == 1 and "auth.test: invalid_auth" in failed.stdout
    assert "xoxb-revoked-token" not in failed.stdout


def test_settings_are_refused_in_one_line(hermes, profile: Path) -> None:
    before = (profile / "config.yaml").read_bytes()
    key = "platforms.enabled.slack.settings"
    refused(hermes("config", "set", f"{key}.app_token", "''"), key,
            "app_token: missing — Socket Mode needs the app-level token", "SLACK_APP_TOKEN")
    refused(hermes("config", "set", f"{key}.mode", "events"), key,
            "signing_secret: missing", "SLACK_SIGNING_SECRET")
    refused(hermes("config", "set", f"{key}.api_base", "slack.com"), f"{key}.api_base",
            "not an http(s) url")
    refused(hermes("config", "set", f"{key}.command", "hermes"), f"{key}.command",
            "e.g. /hermes")
    refused(hermes("config", "set", f"{key}.reply_in_threads", "false"), "reply_in_thread")
    assert (profile / "config.yaml").read_bytes() == before


def added(hermes, *args: str) -> str:
    return ok(hermes("cron", "add", *args)).split()[2]


def test_cron_delivers_to_the_home_channel_and_a_thread_without_a_gateway(
        hermes, profile: Path, slack: FakeSlack) -> None:
    connections = slack.connections
    thread = "1795000000.000100"
    jobs = [added(hermes, "every 1d", "Summarise the incidents", "--deliver", "slack"),
            added(hermes, "every 1d", "Count the tickets", "--deliver",
                  f"slack:{OTHER}:{thread}")]
    make_due(profile, *jobs)
    slack.fail("chat.postMessage", "ratelimited", status=429, retry_after=1)
    out = ok(hermes("cron", "tick"))
    assert f"job {jobs[0]} (Summarise the incidents): ok, delivered to slack:{HOME}" in out
    assert f"delivered to slack:{OTHER}:{thread}" in out
    assert slack.texts(HOME) == ["Done: Summarise the incidents"]
    assert slack.texts(OTHER, thread) == ["Done: Count the tickets"]
    refused_at, sent_at = (c.at for c in slack.of("chat.postMessage")[-3:-1])
    assert sent_at - refused_at >= 0.9  # the 429's Retry-After
    assert slack.connections == connections  # the Web API only



def test_a_refused_app_token_fails_the_platform_in_one_line(
        environ: dict[str, str], profile: Path, fake_llm: FakeLLM, slack: FakeSlack) -> None:
    # beside a platform that serves: a gateway none of whose platforms start exits (2), and
    # whether the status file showed "failed" before that was a race
    configure_messaging(profile, fake_llm.openai_base_url, {
        "slack": {"kind": "slack", "token": "${secret:SLACK_BOT_TOKEN}",
                  "settings": {"app_token": "${secret:SLACK_APP_TOKEN}", "api_base": slack.url}},
        "api_server": {"kind": "api_server", "token": "${secret:API_SERVER_KEY}",
                       "settings": {"port": 0}}},
        {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": "xapp-1-revoked",
         "API_SERVER_KEY": "test-key-0123456789abcdef"})
    with gateway(environ, profile, ready=False) as gw:
        detail = wait_until(lambda: _failed(gw), 120, "the platform failed")
    assert detail == ("Slack refused apps.connections.open: invalid_auth — set the app-level "
                      "token (xapp-…, scope connections:write): `hermes config set "
                      "SLACK_APP_TOKEN xapp-…`")
    assert "xapp-1-revoked" not in (profile / "logs" / "gateway.log").read_text()


def _failed(gw: Gateway) -> str | None:
    assert gw.proc.poll() is None, gw.output()
    try:
        platform = json.loads((gw.home / "gateway.json").read_text())["platforms"]["slack"]
    except (OSError, ValueError, KeyError):
        return None
    return str(platform["detail"]) if platform["state"] == "failed" else None
