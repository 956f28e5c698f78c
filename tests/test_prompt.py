"""The system prompt: section order, identity, memory, skills, context files, frozen on
resume, and ``hermes prompt show`` through the real CLI."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from dependency_injector import providers

from conftest import write_fake_provider
from fakellm import FakeLLM, Reply
from hermes.agent.factory import Interaction
from hermes.agent.prompt import DEFAULT_IDENTITY, TOOL_GUIDANCE
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_from_path
from hermes.memory.base import MemoryProvider


class FakeMemory(MemoryProvider):
    """A memory service with a frozen snapshot and one external provider block."""

    name = "fake"

    def __init__(self, snapshot: str = "MEMORY-SNAPSHOT-MARKER",
                 blocks: tuple[str, ...] = ("PROVIDER-BLOCK-MARKER",)):
        self.text, self.blocks = snapshot, blocks

    def snapshot(self) -> str:
        return self.text

    def system_blocks(self) -> list[str]:
        return list(self.blocks)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The environment's working directory: a git repository."""
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


def make_runtime(root: Path, environ: dict[str, str], work: Path, *overrides: str,
                 base_url: str = "http://127.0.0.1:9/v1"):
    write_fake_provider(root, base_url)
    home = home_from_path(root)
    composed = compose_config(home, environ, [f"environment.cwd={work}", *overrides])
    return build_runtime(home, composed.config, environ)


def write_skill(root: Path, name: str, description: str) -> None:
    skill = root / "skills" / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}"
                                    "\n---\n\nSteps...\n")


def new_prompt(runtime, source: str = "cli") -> tuple[str, str]:
    """Start a session; return its id and the system prompt stored with it."""
    agent = runtime.container.agent_factory().new_session(Interaction(source=source))
    stored = runtime.container.sessions().get_session(agent.session_id).system_prompt
    assert agent.messages[0] == {"role": "system", "content": stored}
    return agent.session_id, stored


def test_sections_come_in_the_fixed_order(root: Path, environ, work: Path) -> None:
    root.mkdir(parents=True)
    (root / "SOUL.md").write_text("SOUL-MARKER: you are a ship's cat.\n")
    write_skill(root, "deploy", "SKILL-MARKER: deploy the site")
    (work / "AGENTS.md").write_text("CONTEXT-MARKER: run make test\n")
    runtime = make_runtime(root, environ, work, "agent.personality=PERSONALITY-MARKER")
    with runtime.container.memory.override(providers.Object(FakeMemory())), runtime:
        session_id, prompt = new_prompt(runtime)
    markers = ["SOUL-MARKER", TOOL_GUIDANCE, "PERSONALITY-MARKER", "PROVIDER-BLOCK-MARKER",
               "MEMORY-SNAPSHOT-MARKER", "# Skills", "SKILL-MARKER", "# Project context",
               "CONTEXT-MARKER", f"Session: {session_id}", "Platform: cli"]
    positions = [prompt.find(marker) for marker in markers]
    assert -1 not in positions, dict(zip(markers, positions, strict=True))
    assert positions == sorted(positions)
    assert DEFAULT_IDENTITY not in prompt


def test_default_identity_without_soul_and_empty_sections_left_out(
        root: Path, environ, work: Path) -> None:
    runtime = make_runtime(root, environ, work, "memory=none", "toolsets=minimal")
    with runtime:
        _, prompt = new_prompt(runtime, source="cron")
    assert prompt.startswith(DEFAULT_IDENTITY + "\n\n")
    assert "# Skills" not in prompt and "# Project context" not in prompt
    assert "\n\n\n" not in prompt  # no blank sections
    assert "Platform: cron. " in prompt and "do not ask questions" in prompt


def test_builtin_memory_snapshot_is_in_the_prompt(root: Path, environ, work: Path) -> None:
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "MEMORY.md").write_text("the deploy key is in 1Password\n§\nuse uv")
    (root / "memories" / "USER.md").write_text("prefers metric units")
    with make_runtime(root, environ, work) as runtime:
        _, prompt = new_prompt(runtime)
    memory = prompt.index("the deploy key is in 1Password")
    assert memory < prompt.index("use uv") < prompt.index("prefers metric units")
    assert prompt.index(TOOL_GUIDANCE) < memory < prompt.index("Session: ")


def test_memory_without_system_blocks_still_works(root: Path, environ, work: Path) -> None:
    class SnapshotOnly(MemoryProvider):
        def snapshot(self) -> str:
            return "ONLY-SNAPSHOT"

    runtime = make_runtime(root, environ, work)
    with runtime.container.memory.override(providers.Object(SnapshotOnly())), runtime:
        _, prompt = new_prompt(runtime)
    assert "ONLY-SNAPSHOT" in prompt


def test_skills_index_lists_each_skill_with_its_description(
        root: Path, environ, work: Path) -> None:
    write_skill(root, "release", "Cut a release and publish the notes")
    write_skill(root, "triage", "Sort new issues by area")
    with make_runtime(root, environ, work) as runtime:
        _, prompt = new_prompt(runtime)
    assert "- release: Cut a release and publish the notes\n- triage: Sort new issues" in prompt
    assert "skill_view(name)" in prompt  # how to load the full instructions


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def test_resume_restores_the_stored_prompt_verbatim(root: Path, environ, work: Path,
                                                    llm: FakeLLM) -> None:
    root.mkdir(parents=True)
    (root / "SOUL.md").write_text("You are the FIRST soul.")
    (work / "AGENTS.md").write_text("first project rules")
    with make_runtime(root, environ, work, base_url=llm.openai_base_url) as runtime:
        session_id, stored = new_prompt(runtime)
    (root / "SOUL.md").write_text("You are the SECOND soul.")
    (work / "AGENTS.md").write_text("second project rules")
    llm.push(Reply(text="still here"))
    with make_runtime(root, environ, work, base_url=llm.openai_base_url) as runtime:
        agent = runtime.container.agent_factory().resume(session_id, Interaction())
        assert agent.run_turn("hello again").text == "still here"
        _, fresh = new_prompt(runtime)
    sent = llm.requests[0].body["messages"][0]
    assert sent == {"role": "system", "content": stored}
    assert "FIRST soul" in stored and "first project rules" in stored
    assert "SECOND soul" in fresh and "second project rules" in fresh


def test_prompt_show_prints_sections_with_sizes_in_order(hermes, root: Path, work: Path) -> None:
    root.mkdir(parents=True)
    (root / "SOUL.md").write_text("You are SHOWN-SOUL.")
    (root / "memories").mkdir()
    (root / "memories" / "MEMORY.md").write_text("SHOWN-MEMORY")
    write_skill(root, "lint", "Run the linters")
    (work / "CLAUDE.md").write_text("SHOWN-CONTEXT")
    result = hermes("prompt", "show", f"environment.cwd={work}")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "placeholder session id <session-id>" in text and "no session was created" in text
    headers = re.findall(r"^──── (\w+): ([\d,]+) chars, ~([\d,]+) tokens ────$", text, re.M)
    names = [name for name, _, _ in headers]
    assert names == ["identity", "tool_guidance", "memory", "skills", "context_files",
                     "session", "platform"]
    sizes = {name: int(chars.replace(",", "")) for name, chars, _ in headers}
    assert sizes["identity"] == len("You are SHOWN-SOUL.")
    assert text.index("SHOWN-SOUL") < text.index("SHOWN-MEMORY") < text.index("SHOWN-CONTEXT")
    assert "Session: <session-id>." in text
    assert re.search(r"^total +[\d,]+ +~[\d,]+$", text, re.M)
    assert not (root / "state.db").exists()  # no session, no database


def test_prompt_show_sizes_only_and_overrides(hermes, root: Path, work: Path) -> None:
    result = hermes("prompt", "show", "--sizes", "toolsets=minimal", "memory=none",
                    "agent.personality=Be terse.", f"environment.cwd={work}")
    assert result.exit_code == 0, result.output
    rows = re.findall(r"^(\w+) +([\d,]+) +~([\d,]+)$", result.stdout, re.M)
    assert [name for name, _, _ in rows] == ["identity", "tool_guidance", "personality",
                                             "session", "platform", "total"]
    assert ("personality", "9", "3") in rows
    assert "Be terse." not in result.stdout  # sizes only
