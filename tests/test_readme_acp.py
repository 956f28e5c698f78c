"""The README's editor section as written: the Zed settings block's command, started the
way Zed starts it (the command on PATH with its args and env), driven by the official ACP
SDK's client against the fake LLM; and the section's override example."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_support import Editor, connect, prompt_of
from conftest import write_fake_provider
from fakellm import FakeLLM, Reply
from readme_support import code_blocks, on_path, section

SECTION = "## Editors: `hermes acp`"


def zed_agent() -> tuple[list[str], dict[str, str]]:
    """The settings block's one agent: its argv (command then args) and env."""
    (block,) = code_blocks(section(SECTION), "json")
    (agent,) = json.loads(block)["agent_servers"].values()
    return [agent["command"], *agent["args"]], agent["env"]


def override_example() -> list[str]:
    (args,) = re.findall(r'`"args": (\[.*?\])`', section(SECTION), re.S)
    return json.loads(args)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def editor_environ(environ: dict[str, str], root: Path, llm: FakeLLM) -> dict[str, str]:
    """The test's environment with `hermes` on PATH and the README's `work` profile."""
    env = on_path(environ)
    created = subprocess.run(["hermes", "profile", "create", "work"], env=env, text=True,
                             capture_output=True, timeout=120)
    assert created.returncode == 0, created.stderr
    write_fake_provider(root / "profiles" / "work", llm.openai_base_url)
    return env


def run_editor(argv: list[str], env: dict[str, str], project: Path, log: Path) -> Editor:
    editor = Editor()
    command = [shutil.which(argv[0], path=env["PATH"]) or argv[0], *argv[1:]]

    async def scenario() -> None:
        async with connect(editor, env, stderr=log, command=command) as (conn, hello):
            assert hello.agent_info.name == "hermes"
            session = await conn.new_session(cwd=str(project))
            done = await conn.prompt(session_id=session.session_id, prompt=prompt_of("hi"))
            assert done.stop_reason == "end_turn"

    asyncio.run(scenario())
    return editor


def test_the_zed_settings_block_starts_the_profile(editor_environ: dict[str, str],
                                                   llm: FakeLLM, tmp_path: Path) -> None:
    argv, env = zed_agent()
    assert argv[0] == "hermes"
    llm.push(Reply(text="Hello from work."))
    editor = run_editor(argv, editor_environ | env, tmp_path, tmp_path / "zed.log")
    assert editor.text() == "Hello from work."
    listed = subprocess.run(["hermes", "-p", "work", "sessions", "list"], env=editor_environ,
                            text=True, capture_output=True, timeout=120)
    assert listed.returncode == 0 and "acp" in listed.stdout, listed


def test_the_override_example_applies(editor_environ: dict[str, str], llm: FakeLLM,
                                      tmp_path: Path) -> None:
    argv = ["hermes", *override_example()]
    assert argv[-1] == "provider.model=gpt-4o-mini"
    llm.push(Reply(text="small model"))
    run_editor(argv, editor_environ, tmp_path, tmp_path / "zed.log")
    assert llm.requests[0].model == "gpt-4o-mini"
