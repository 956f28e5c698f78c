"""The README's Discord section runs as written, in a real shell, against the fake Discord
(tests/fake_discord: it takes the README's token; its user and channel ids are the
README's). Test-only steps point the profile at the fake LLM and at the fake's address
(``settings.api_base``); the README's commands are otherwise unchanged. Then: a direct
message answered, cron answers delivered to the home channel (``--deliver discord``) and to
``discord:CHANNEL_ID``, and ``hermes doctor`` checking the token."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import wait_until
from fake_discord import serving
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section

SECTION = "### Discord"
OTHER_CHANNEL = 345678901234567890


def readme() -> tuple[str, str, int, int]:
    """The section's commands, the token, the allowed user id, the home channel id."""
    text = section(SECTION)
    [block] = code_blocks(text)
    token = re.search(r'DISCORD_BOT_TOKEN "([^"]+)"', block)
    user = re.search(r'allowed_users: \["(\d+)"\]', block)
    home = re.search(r'home_channel: "(\d+)"', block)
    assert token and user and home, block
    return block, token[1], int(user[1]), int(home[1])


def test_the_discord_section_runs_as_written(environ: dict[str, str], root: Path,
                                             tmp_path: Path) -> None:
    block, token, you, home = readme()
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, block, tmp_path)
    with serving(token) as fake, FakeLLM(fallback=lambda r: Reply(
            text=f"re: {(r.last_user_text or '').splitlines()[-1]}"), strict=False) as llm:
        for key, value in (("provider", "custom"), ("provider.model", "gpt-4o"),
                           ("provider.api_base", llm.openai_base_url),
                           ("CUSTOM_API_KEY", "sk-fake-test-key-1234"),
                           ("platforms.enabled.discord.settings.api_base", fake.api_base)):
            bash(environ, f"hermes -p work config set {key} '{value}'", tmp_path)
        doctor = bash(environ, "hermes -p work doctor || true", tmp_path)
        assert re.search(r"discord.*@hermes", doctor), doctor
        assert fake.of("GET", "users/@me")
        with gateway(environ, root / "profiles" / "work", ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "discord")
            wait_until(lambda: fake.identified, what="IDENTIFY")
            fake.say("hello from Discord", user_id=you)
            wait_until(lambda: fake.texts(fake.dm_channel(you)), 60, "the answer")
            assert fake.texts(fake.dm_channel(you)) == ["re: hello from Discord"]
        job = bash(environ, 'hermes -p work cron add "every 1d" "Summarise the backups" '
                   "--deliver discord", tmp_path).split()[2]
        out = bash(environ, f"hermes -p work cron run {job}", tmp_path)
        assert f"delivered to discord:{home}" in out, out
        other = bash(environ, 'hermes -p work cron add "every 1d" "Count the tickets" '
                     f"--deliver discord:{OTHER_CHANNEL}", tmp_path).split()[2]
        bash(environ, f"hermes -p work cron run {other}", tmp_path)
        assert fake.texts(home) == ["re: Summarise the backups"]
        assert fake.texts(OTHER_CHANNEL) == ["re: Count the tickets"]
