"""The README's Slack section runs as written, in a real shell, against the fake Slack
(tests/fake_slack) holding the README's tokens: its manifest asks for what the app uses,
its commands configure the profile, doctor passes, a gateway answers the README's member
id in a direct message and in a channel, offers a stranger a pairing code, and its cron
commands deliver to the home channel and to a channel. Test-only steps point the profile
at the fake LLM and at the fake's Web API."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from conftest import wait_until
from fake_slack import FakeSlack, section_text, serving
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section
from test_cron_telegram import make_due

SECTION = "### Slack"
BOT_TOKEN = "xoxb-0000000000-0000000000000-your-bot-token"
APP_TOKEN = "xapp-1-A0000000000-0000000000000-your-app-token"
YOU, STRANGER = "U0123ABCD", "U0STRANGER"
USED_SCOPES = {"app_mentions:read", "channels:history", "chat:write", "commands",
               "files:read", "files:write", "im:history", "reactions:write", "users:read"}
USED_EVENTS = {"app_home_opened", "app_mention", "message.channels", "message.im"}


def test_the_manifest_asks_for_what_the_app_uses() -> None:
    [manifest] = (yaml.safe_load(block) for block in code_blocks(section(SECTION), "yaml"))
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True and settings["interactivity"]["is_enabled"]
    assert set(manifest["oauth_config"]["scopes"]["bot"]) >= USED_SCOPES
    assert set(settings["event_subscriptions"]["bot_events"]) >= USED_EVENTS
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/hermes"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True


def test_the_slack_section_runs_as_written(environ: dict[str, str], root: Path,
                                           tmp_path: Path) -> None:
    setup, cron = code_blocks(section(SECTION))
    with serving(BOT_TOKEN, APP_TOKEN) as slack, FakeLLM(
            fallback=lambda r: Reply(text=f"re: {(r.last_user_text or '').splitlines()[-1]}"),
            strict=False) as llm:
        bash(environ, "hermes profile create work", tmp_path)
        bash(environ, setup, tmp_path)
        _point_at_fakes(root / "profiles" / "work", llm.openai_base_url, slack.url)
        assert re.search(r"ok\s+platform slack\s+bot hermes", bash(
            environ, "hermes -p work doctor", tmp_path))
        home = root / "profiles" / "work"
        with gateway(environ, home, ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "slack")
            wait_until(lambda: slack.sockets, 30, "the Socket Mode connection")
            _conversation(slack)
        jobs = re.findall(r"added job (\S+)", bash(environ, cron, tmp_path))
        make_due(home, *jobs)  # test-only: as if their time had come
        assert bash(environ, "hermes -p work cron tick", tmp_path).count("delivered to") == 2
    assert slack.texts("C0123CHAN") == ["re: Summarise the open incidents"]
    assert slack.texts("C0456CHAN") == ["re: Remind the team of the standup"]


def _conversation(slack: FakeSlack) -> None:
    slack.message(YOU, "hello from Slack", "D0YOU")
    wait_until(lambda: slack.texts("D0YOU"), 90, "the answer")
    asked = slack.mention(YOU, "and in a channel?", "C0TEAM")
    wait_until(lambda: slack.texts("C0TEAM", asked), 60, "the answer in the thread")
    slack.message(STRANGER, "hi", "D0STRANGER")
    wait_until(lambda: slack.texts("D0STRANGER"), 60, "the pairing offer")
    assert slack.texts("D0YOU") == ["re: hello from Slack"]
    assert slack.texts("C0TEAM", asked) == ["re: and in a channel?"]
    assert "pairing approve slack " in section_text(slack.posts("D0STRANGER")[0].params)


def _point_at_fakes(home: Path, llm_url: str, slack_url: str) -> None:
    """Test-only: the model is the fake LLM, the Web API the fake's."""
    config = yaml.safe_load((home / "config.yaml").read_text())
    config["defaults"] = [*(config.get("defaults") or []), {"override provider": "custom"}]
    config["provider"] = {"model": "gpt-4o", "api_base": llm_url, "max_retries": 0}
    config["platforms"]["enabled"]["slack"]["settings"]["api_base"] = slack_url
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    with (home / ".env").open("a") as env:
        env.write("CUSTOM_API_KEY=sk-fake-test-key-1234\n")

