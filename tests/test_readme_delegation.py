"""The README's delegation section runs as written, in a real shell, against the fake
LLM: a profile's one-shot delegates a batch of three, the children's sessions are
listed, `sessions show` draws the tree, and the acp_commands example is accepted (a
setting that is not one program is refused, naming the key)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from delegation_support import Team, delegate, serving
from fakellm import FakeLLM, Reply
from readme_support import bash, code_blocks, commands, section

SECTION = "## Delegation: sub-agents"
PARTS = ("review the parser", "review the CLI", "review the docs")


@pytest.fixture
def team() -> Team:
    return Team([delegate(*PARTS), Reply(text="All three reviewed: no typos.")])


@pytest.fixture
def llm(team: Team) -> Iterator[FakeLLM]:
    with serving(team) as fake:
        yield fake


def block_commands() -> list[str]:
    """The command lines of the section's shell block, comments removed."""
    (block,) = code_blocks(section(SECTION))
    return commands(block)


def inline_commands() -> list[str]:
    """The commands the section's prose shows in backticks, joined where they wrap."""
    return [re.sub(r"\s*\n\s*", " ", c) for c in re.findall(r"`(hermes [^`]+)`", section(SECTION))]


def test_the_delegation_section_runs_as_written(hermes, environ: dict[str, str], root: Path,
                                                tmp_path: Path, llm: FakeLLM) -> None:
    ok(hermes("profile", "create", "work"))
    write_fake_provider(root / "profiles" / "work", llm.openai_base_url)
    concurrency, answer, listing = (bash(environ, line, tmp_path)
                                    for line in block_commands())
    assert concurrency.startswith("delegation.max_concurrency = 5")
    assert answer == "All three reviewed: no typos.\n"
    rows = [line for line in listing.splitlines() if " delegate " in f" {line} "]
    assert len(rows) == 3 and all(any(p in row for p in PARTS) for row in rows), listing
    show, acp_commands = inline_commands()
    assert show == "hermes sessions show ID"
    with sqlite3.connect(root / "profiles" / "work" / "state.db") as db:
        [(parent,)] = db.execute("SELECT id FROM sessions WHERE source = 'cli'").fetchall()
    shown = bash(environ, f"hermes -p work sessions show {parent[:8]}", tmp_path)
    tree = shown[shown.index("tree\n"):].splitlines()[1:]
    assert "← this session" in tree[0] and parent[:12] in tree[0]
    assert sorted(line.split("  ")[4] for line in tree[1:4]) == sorted(PARTS)
    assert bash(environ, acp_commands, tmp_path).startswith(
        "delegation.acp_commands = [claude-code-acp, hermes]")


def test_an_acp_command_with_arguments_is_refused_naming_the_key(
        hermes, root: Path) -> None:
    ok(hermes("profile", "create", "work"))
    config = root / "profiles" / "work" / "config.yaml"
    before = config.read_text() if config.exists() else None
    refused(hermes("-p", "work", "config", "set", "delegation.acp_commands",
                   "[claude --yes]"), "delegation.acp_commands", "one program")
    assert (config.read_text() if config.exists() else None) == before
