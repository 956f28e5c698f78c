"""``send_message`` reaches every chat platform kind through the one way of delivering
(as ``hermes cron run`` does, from ``hermes chat``): Discord, Slack, Mattermost and Signal,
each against its fake (tests/fake_*.py), from one profile with all four; IRC and XMPP
against their real servers (ngIRCd, prosody)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ok, wait_until
from fake_discord import CHANNEL_ID, FakeDiscord
from fake_discord import serving as discord_serving
from fake_mattermost import FakeMattermost
from fake_mattermost import serving as mattermost_serving
from fake_signal import FakeSignalDaemon
from fake_signal import serving as signal_serving
from fake_slack import FakeSlack
from fake_slack import serving as slack_serving
from fakellm import FakeLLM
from irc_support import Ngircd, ngircd  # noqa: F401 - the fixture
from messaging_support import configure_messaging
from test_send_message import script
from xmpp_support import XmppUser, prosody_server

DISCORD_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gsend.fake-discord-send-token-0123456789"
SLACK_BOT, SLACK_APP = "xoxb-1111-2222-send-bot-token", "xapp-1-A0HERMES-3333-send-app"
MATTERMOST_TOKEN, MATTERMOST_CHANNEL = "mm-send-token-0123456789abcdef", "c" * 26
SIGNAL_ACCOUNT, SIGNAL_TO = "+15550000001", "+15550000077"
SLACK_CHANNEL = "C0SENDTEST"


@pytest.fixture(scope="module")
def fakes() -> Iterator[dict[str, Any]]:
    with FakeLLM(fallback=script, strict=False) as llm, \
            discord_serving(DISCORD_TOKEN) as discord, \
            slack_serving(SLACK_BOT, SLACK_APP) as slack, \
            mattermost_serving(MATTERMOST_TOKEN) as mattermost, \
            signal_serving(SIGNAL_ACCOUNT) as signal:
        yield {"llm": llm, "discord": discord, "slack": slack, "mattermost": mattermost,
               "signal": signal}


@pytest.fixture
def profile(root: Path, fakes: dict[str, Any]) -> Path:
    configure_messaging(root, fakes["llm"].openai_base_url, {
        "discord": {"kind": "discord", "token": "${secret:DISCORD_BOT_TOKEN}",
                    "settings": {"api_base": fakes["discord"].api_base}},
        "slack": {"kind": "slack", "token": "${secret:SLACK_BOT_TOKEN}",
                  "settings": {"app_token": "${secret:SLACK_APP_TOKEN}",
                               "api_base": fakes["slack"].url}},
        "mattermost": {"kind": "mattermost", "token": "${secret:MATTERMOST_TOKEN}",
                       "settings": {"url": fakes["mattermost"].url}},
        "signal": {"kind": "signal", "settings": {"account": SIGNAL_ACCOUNT,
                                                  "url": fakes["signal"].url}}},
        {"DISCORD_BOT_TOKEN": DISCORD_TOKEN, "SLACK_BOT_TOKEN": SLACK_BOT,
         "SLACK_APP_TOKEN": SLACK_APP, "MATTERMOST_TOKEN": MATTERMOST_TOKEN})
    return root


def received(fakes: dict[str, Any], platform: str) -> list[str]:
    discord: FakeDiscord = fakes["discord"]
    slack: FakeSlack = fakes["slack"]
    mattermost: FakeMattermost = fakes["mattermost"]
    signal: FakeSignalDaemon = fakes["signal"]
    return {"discord": lambda: discord.texts(CHANNEL_ID),
            "slack": lambda: slack.texts(SLACK_CHANNEL),
            "mattermost": lambda: mattermost.texts(MATTERMOST_CHANNEL),
            "signal": lambda: signal.texts(SIGNAL_TO)}[platform]()


@pytest.mark.parametrize(("platform", "chat"), [
    ("discord", str(CHANNEL_ID)), ("slack", SLACK_CHANNEL),
    ("mattermost", MATTERMOST_CHANNEL), ("signal", SIGNAL_TO)])
def test_the_agent_sends_to_a_chat_of_each_platform(hermes, profile: Path,
                                                   fakes: dict[str, Any], platform: str,
                                                   chat: str) -> None:
    before = len(received(fakes, platform))
    out = ok(hermes("chat", "-q", f"send {platform}:{chat}: The backup is done.",
                    "--yolo")).strip()
    assert json.loads(out.removeprefix("tool said: ")) == {
        "sent_to": f"{platform}:{chat}", "characters": 19}
    assert received(fakes, platform)[before:] == ["The backup is done."]


def sent_by(hermes, target: str) -> None:
    out = ok(hermes("chat", "-q", f"send {target}: The backup is done.", "--yolo")).strip()
    assert json.loads(out.removeprefix("tool said: ")) == {
        "sent_to": target, "characters": 19}


def test_the_agent_sends_to_an_irc_channel(hermes, root: Path, fakes: dict[str, Any],
                                           ngircd: Ngircd) -> None:  # noqa: F811
    configure_messaging(root, fakes["llm"].openai_base_url, {"irc": {
        "kind": "irc", "settings": {"server": "localhost", "port": ngircd.tls_port,
                                    "ca_file": str(ngircd.ca_file), "nick": "messenger",
                                    "channels": []}}})
    reader = ngircd.user("reader")
    try:
        reader.join("#backups")
        sent_by(hermes, "irc:#backups")
        assert reader.wait_messages("messenger", target="#backups") == ["The backup is done."]
    finally:
        reader.quit()


def test_the_agent_sends_to_an_xmpp_account(hermes, root: Path, fakes: dict[str, Any],
                                            tmp_path: Path) -> None:
    (tmp_path / "prosody").mkdir()
    with prosody_server(tmp_path / "prosody") as server:
        agent = server.register("hermes", "pw-hermes-send-0123")
        person = XmppUser(server, server.register("ada", "pw-ada-send-0123"),
                          "pw-ada-send-0123")
        try:
            configure_messaging(root, fakes["llm"].openai_base_url, {"xmpp": {
                "kind": "xmpp", "token": "${secret:XMPP_PASSWORD}",
                "settings": {"jid": agent, "host": "127.0.0.1", "port": server.port,
                             "ca_file": str(server.ca_file)}}},
                {"XMPP_PASSWORD": "pw-hermes-send-0123"})
            sent_by(hermes, f"xmpp:{person.jid}")
            got = wait_until(lambda: person.from_(agent), timeout=60, what="the message")
            assert [m.body for m in got] == ["The backup is done."]  # type: ignore[union-attr]
        finally:
            person.close()
