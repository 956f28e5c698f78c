"""The README's Discord section runs as written, in a real shell, against the fake Discord
(tests/fake_discord: it takes the README's token; its user and channel ids are the
README's). Test-only steps point the profile at the fake LLM and at the fake's address
(``settings.api_base``); the README's commands are otherwise unchanged. Then: ``hermes
doctor`` checks the token, a direct message is answered, and ``--deliver discord`` (the
home channel) is accepted; tests/test_discord_cron.py delivers cron answers."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from conftest import wait_until
from fake_discord import serving
from fakellm import FakeLLM, Reply
from gateway_support import gateway
from messaging_support import platform_detail
from readme_support import bash, code_blocks, section

SECTION = "### Discord"


def readme() -> tuple[str, str, int, int]:
    """The section's commands, the token, the allowed user id, the home channel id."""
    text = section(SECTION)
    [block] = code_blocks(text)
    token = re.search(r'DISCORD_BOT_TOKEN "([^"]+)"', block)
    user = re.search(r'allowed_users: \["(\d+)"\]', block)
    home = re.search(r'home_channel: "(\d+)"', block)
    assert token and user and home, block
    return block, token[1], int(user[1]), int(home[1])


def point_at(home: Path, llm_url: str, api_base: str) -> None:
    """Test-only: the profile's model is the fake LLM and its Discord the fake (written to
    its files directly: each ``config set`` would cost a few seconds)."""
    config = yaml.safe_load((home / "config.yaml").read_text())
    config["defaults"] = [*(config.get("defaults") or []), {"override provider": "custom"}]
    config["provider"] = {"model": "gpt-4o", "api_base": llm_url, "max_retries": 0}
    config["platforms"]["enabled"]["discord"]["settings"] = {"api_base": api_base}
    (home / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    with (home / ".env").open("a") as env:
        env.write("CUSTOM_API_KEY=sk-fake-test-key-1234\n")


def test_the_discord_section_runs_as_written(environ: dict[str, str], root: Path,
                                             tmp_path: Path) -> None:
    block, token, you, home = readme()
    bash(environ, "hermes profile create work", tmp_path)
    bash(environ, block, tmp_path)
    with serving(token) as fake, FakeLLM(fallback=lambda r: Reply(
            text=f"re: {(r.last_user_text or '').splitlines()[-1]}"), strict=False) as llm:
        point_at(root / "profiles" / "work", llm.openai_base_url, fake.api_base)
        doctor = bash(environ, "hermes -p work doctor || true", tmp_path)
        assert re.search(r"discord.*@hermes", doctor), doctor
        assert fake.of("GET", "users/@me")
        with gateway(environ, root / "profiles" / "work", ["-p", "work"], ready=False) as gw:
            platform_detail(gw, "discord")
            wait_until(lambda: fake.identified, what="IDENTIFY")
            fake.say("hello from Discord", user_id=you)
            wait_until(lambda: fake.texts(fake.dm_channel(you)), 60, "the answer")
            assert fake.texts(fake.dm_channel(you)) == ["re: hello from Discord"]
        bash(environ, 'hermes -p work cron add "every 1d" "Summarise the backups" '
             "--deliver discord", tmp_path)  # the README's target syntax is accepted
