"""The README's scheduled-jobs section runs as written, in a real shell, against the fake
LLM: its blocks in order, Telegram enabled (as the messaging section makes it) only
before the first block that delivers there, so a block without it runs on a profile
without Telegram. Three jobs are added, one runs now, is edited, paused, resumed and
removed, a tick finds nothing due, and the Telegram ones have the home channel."""

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
]
TELEGRAM = [
    "hermes -p work config set TELEGRAM_BOT_TOKEN 123456:ABC-token-from-BotFather",
    "hermes -p work config set platforms.enabled.telegram '{kind: telegram, token: "
    "\"${secret:TELEGRAM_BOT_TOKEN}\", allowed_users: [\"123456789\"]}'",
]
"""Set up (as the messaging section does) only before a block that delivers to Telegram:
a block without it must run on a profile without Telegram."""


def readme_blocks() -> list[list[str]]:
    """The command lines of each of the section's shell blocks, comments removed."""
    return [commands(block) for block in code_blocks(section(SECTION))]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda r: Reply(text="Time to stretch."), strict=False) as fake:
        yield fake


def test_the_cron_section_runs_as_written(environ: dict[str, str], root: Path,
                                          tmp_path: Path, llm: FakeLLM) -> None:
    for line in SETUP:
        bash(environ, line.format(llm=llm.openai_base_url), tmp_path)
    out: dict[str, str] = {}
    telegram = False
    for block in readme_blocks():
        if "telegram" in " ".join(block) and not telegram:
            for line in TELEGRAM:
                bash(environ, line, tmp_path)
            telegram = True
        out.update((line, bash(environ, line, tmp_path)) for line in block)

    def of(start: str) -> str:
        (found,) = [text for line, text in out.items()
                    if line.startswith(f"hermes -p work {start}")]
        return found

    ci, summary = of('cron add "every 2h"'), of('cron add "0 9 * * 1-5"')
    stretch, listing = of("cron add 30m"), of("cron list")
    assert [line.split()[:2] for line in (ci, summary, stretch)] == [["added", "job"]] * 3
    assert "delivers to telegram\n" in ci and "delivers to telegram:123456789" in summary
    assert "(stretch): once at " in stretch and "delivers to local" in stretch
    lines = list(out)
    added = [line for line in lines[:lines.index("hermes -p work cron list")]
             if " cron add " in line]  # the jobs listed: those added before the list
    assert listing.count("scheduled") == len(added) and " stretch " in listing
    assert ("cron 0 9 * * 1-5" in listing) == any('"0 9 * * 1-5"' in a for a in added)
    assert re.fullmatch(r"job \w+ \(stretch\): ok; output \S+/cron/output/\w+/\S+\.md\n",
                        of("cron run stretch"))
    assert "Remind me to stretch" in (llm.requests[-1].last_user_text or "")
    assert "(stretch): every 1d, scheduled" in of("cron edit stretch")
    assert of("cron pause").startswith("paused job")
    assert of("cron resume").startswith("resumed job")
    assert of("cron remove").startswith("removed job") and of("cron tick") == "no job is due\n"
    jobs = json.loads((root / "profiles" / "work" / "cron" / "jobs.json").read_text())["jobs"]
    assert sorted(j["deliver"] for j in jobs) == ["telegram", "telegram:123456789"]
    assert [j["skills"] for j in jobs if j["deliver"] == "telegram:123456789"] == [
        ["git-workflow"]]
    assert of("config set platforms.enabled.telegram.home_channel").startswith(
        "platforms.enabled.telegram.home_channel = 123456789")
