"""The README's scheduled-jobs section runs as written, in a real shell, against the fake
LLM: a profile with Telegram enabled (as the messaging section makes it) gets its home
channel and three jobs, one runs now, is edited, paused, resumed and removed, and a tick
finds nothing due."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakellm import FakeLLM, Reply
from readme_support import bash, code_blocks, commands, section

SECTION = "## Scheduled jobs: `hermes cron`"
SETUP = [
    "hermes profile create work",
    "hermes -p work config set provider custom",
    "hermes -p work config set provider.model gpt-4o",
    "hermes -p work config set provider.api_base {llm}",
    "hermes -p work config set CUSTOM_API_KEY sk-fake-test-key-1234",
    "hermes -p work config set TELEGRAM_BOT_TOKEN 123456:ABC-token-from-BotFather",
    "hermes -p work config set platforms.enabled.telegram '{{kind: telegram, token: "
    "\"${{secret:TELEGRAM_BOT_TOKEN}}\", allowed_users: [\"123456789\"]}}'",
]


def readme_commands() -> list[str]:
    """The command lines of the section's shell block, comments removed."""
    (block,) = code_blocks(section(SECTION))
    return commands(block)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda r: Reply(text="Time to stretch."), strict=False) as fake:
        yield fake


def test_the_cron_section_runs_as_written(environ: dict[str, str], root: Path,
                                          tmp_path: Path, llm: FakeLLM) -> None:
    for line in SETUP:
        bash(environ, line.format(llm=llm.openai_base_url), tmp_path)
    out = [bash(environ, line, tmp_path) for line in readme_commands()]
    (home_channel, ci, summary, stretch, listing, run, edit, pause, resume, remove,
     tick) = out
    assert [line.split()[:2] for line in (ci, summary, stretch)] == [["added", "job"]] * 3
    assert "delivers to telegram\n" in ci and "delivers to telegram:123456789" in summary
    assert "(stretch): once at " in stretch
    assert listing.count("scheduled") == 3 and "cron 0 9 * * 1-5" in listing
    assert re.fullmatch(r"job \w+ \(stretch\): ok; output \S+/cron/output/\w+/\S+\.md\n", run)
    assert "Remind me to stretch" in (llm.requests[-1].last_user_text or "")
    assert "(stretch): every 1d, scheduled" in edit
    assert pause.startswith("paused job") and resume.startswith("resumed job")
    assert remove.startswith("removed job") and tick == "no job is due\n"
    jobs = json.loads((root / "profiles" / "work" / "cron" / "jobs.json").read_text())["jobs"]
    assert [j["deliver"] for j in jobs] == ["telegram", "telegram:123456789"]
    assert jobs[1]["skills"] == ["git-workflow"]
    assert home_channel.startswith("platforms.enabled.telegram.home_channel = 123456789")
