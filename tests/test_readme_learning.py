"""The README's learning loop runs as written, in a real shell, against the fake LLM: a
conversation, the skill the background review wrote, and that skill loaded in the next
session. (In-process, so each one-shot waits for its review: the warm server would
finish it after the command, and the next command could run first.)"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM, RecordedRequest, Reply, ToolCall, Turn
from learning_support import is_review
from readme_support import code_blocks, commands, on_path, run, section

SECTION = "### The learning loop: skills from experience"
SKILL = """---
name: publish-static-site
description: Copy a static site into a web root and check that every page arrived.
---
# Publish a static site

1. Copy every page from the source directory into the web root, keeping the layout.
2. List the web root and compare it with the source: every page must be there.
3. Read one page back to be sure it is whole.
"""
PAGES = {"index.html": "<h1>Home</h1>\n", "about.html": "<h1>About</h1>\n"}


def readme_section() -> str:
    return section(SECTION)


def readme_blocks() -> list[list[str]]:
    """The command lines of each shell block of the README's learning-loop section,
    comments removed."""
    return [commands(block) for block in code_blocks(readme_section())]


def respond(request: RecordedRequest) -> Turn:
    """The model of the example: it publishes with file tools, the review writes the skill,
    and the next session loads the skill first."""
    done = len(request.tool_results)
    if is_review(request):
        last = request.body["messages"][-1]
        if last.get("role") == "user" and "skills]" in last.get("content", ""):
            return Reply(tool_calls=[ToolCall("skill_manage", {
                "action": "create", "name": "publish-static-site", "category": "web",
                "content": SKILL})])
        return Reply(text="Nothing to save.")
    if "./docs" in (request.body["messages"][1].get("content") or ""):
        steps = [ToolCall("skill_view", {"name": "publish-static-site"}),
                 ToolCall("write_file", {"path": "public/docs/guide.html",
                                         "content": "<h1>Guide</h1>\n"})]
        return Reply(tool_calls=[steps[done]]) if done < len(steps) else \
            Reply(text="Published docs/guide.html to ./public/docs.")
    steps = [ToolCall("write_file", {"path": f"public/{name}", "content": body})
             for name, body in PAGES.items()]
    steps += [ToolCall("search_files", {"pattern": "*.html", "path": "public", "target": "files"}),
              ToolCall("read_file", {"path": "public/index.html"})]
    if done == 0:
        return Reply(tool_calls=steps[:2])
    if done < 4:
        return Reply(tool_calls=[steps[done]])
    return Reply(text="Published 2 pages to ./public; both are there.")


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM(fallback=respond) as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def shell(environ: dict[str, str], command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(on_path(environ), command, cwd, flags="", check=False)


def test_the_readme_learning_loop_runs_as_written(environ: dict[str, str], root: Path,
                                                  llm: FakeLLM, tmp_path: Path) -> None:
    commands, curator = readme_blocks()
    assert commands[0] == "hermes config set learning.skill_nudge_iterations 3"
    work = tmp_path / "work"
    for name, body in PAGES.items():
        (work / "site" / name).parent.mkdir(parents=True, exist_ok=True)
        (work / "site" / name).write_text(body)
    (work / "docs").mkdir()
    outputs = []
    for command in commands:
        result = shell(environ, command, work)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        outputs.append(result)
    conversation, listed, shown, again, used = outputs[1:]
    assert conversation.stdout == "Published 2 pages to ./public; both are there.\n"
    assert "learned: skill publish-static-site created" in conversation.stderr
    assert (work / "public" / "about.html").read_text() == PAGES["about.html"]
    row = next(line for line in listed.stdout.splitlines()
               if line.startswith("publish-static-site"))
    assert row.split()[1:5] == ["web", "home", "0", "never"] and "new (review" in row
    assert SKILL in shown.stdout
    skill_md = root / "skills" / "web" / "publish-static-site" / "SKILL.md"
    assert skill_md.read_text() == SKILL
    assert again.stdout == "Published docs/guide.html to ./public/docs.\n"
    second = [r for r in llm.requests if not is_review(r)
              and "./docs" in (r.body["messages"][1].get("content") or "")]
    index_line = ("- publish-static-site: Copy a static site into a web root and check that "
                  "every page arrived.")
    assert index_line in second[0].body["messages"][0]["content"]  # the README quotes it
    loaded = json.loads(second[1].tool_results[0].content)
    assert loaded["name"] == "publish-static-site" and "Copy every page" in loaded["content"]
    row = next(line for line in used.stdout.splitlines()
               if line.startswith("publish-static-site"))
    assert row.split()[3] == "1"
    status, dry_run, run = (shell(environ, command, work) for command in curator)
    assert curator[0] == "hermes curator status" and "last run: never" in status.stdout
    assert "a run now would: change nothing" in status.stdout  # the skill is fresh
    assert "dry run, nothing changed" in dry_run.stdout
    assert run.stdout.startswith("curated: change nothing") and run.returncode == 0
    off = "hermes config set learning.enabled false"
    assert f"`{off}`" in readme_section()
    assert shell(environ, off, work).returncode == 0
    assert shell(environ, "hermes config get learning.enabled", work).stdout.strip() == "false"
