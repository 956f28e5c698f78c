"""The README's Voice and send_message/identity sections run as written, in a real shell
(the behaviour behind them: tests/test_voice_*.py, tests/test_send_message.py,
tests/test_identity.py)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from readme_support import bash, code_blocks, section


def test_the_voice_steps_run_as_written(environ: dict[str, str], root: Path,
                                        tmp_path: Path) -> None:
    [block] = code_blocks(section("## Voice"))
    bash(environ, block, tmp_path)
    config = yaml.safe_load((root / "config.yaml").read_text())
    # the last of each pair wins: both run by a program on this machine
    assert {"override stt": "command"} in config["defaults"]
    assert {"override tts": "command"} in config["defaults"]
    assert "{input_path}" in config["stt"]["command"]
    assert "sk-..." not in (root / "config.yaml").read_text()  # the key went to .env
    assert "OPENAI_API_KEY=" in (root / ".env").read_text()
    shown = bash(environ, "hermes config get tts.command && hermes config validate", tmp_path)
    assert "espeak-ng" in shown and "ok:" in shown


def test_the_identity_steps_run_as_written(environ: dict[str, str], root: Path,
                                           tmp_path: Path) -> None:
    [block] = code_blocks(section("## The agent's own messages: `send_message` and linked "
                                  "identities"))
    # test-only: the profile has the two platforms the README's accounts are on
    bash(environ, "hermes profile create work\n"
         "hermes -p work config set TELEGRAM_BOT_TOKEN 123456:token-of-the-readme-test-bot\n"
         "hermes -p work config set DISCORD_BOT_TOKEN token-of-the-readme-test-bot\n"
         "hermes -p work config set platforms.enabled.telegram "
         "'{kind: telegram, token: \"${secret:TELEGRAM_BOT_TOKEN}\"}'\n"
         "hermes -p work config set platforms.enabled.discord "
         "'{kind: discord, token: \"${secret:DISCORD_BOT_TOKEN}\"}'", tmp_path)
    shown = bash(environ, block, tmp_path)
    stored = json.loads((root / "profiles" / "work" / "identities.json").read_text())
    text = json.dumps(stored)
    assert "telegram:123456789" in text and "discord:80351110224678912" not in text
    assert "telegram:123456789" in shown
