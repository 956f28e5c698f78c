"""One vocabulary for toolsets everywhere: options (coding) or toolset names (file,terminal);
unknown names are errors listing the valid ones, at composition and for --toolsets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ok, refused, write_fake_provider
from fakellm import FakeLLM, Reply
from hermes.browser.service import BrowserService
from hermes.browser.tools import browser_tools
from hermes.config.browser_schema import BrowserConfig
from hermes.config.schema import PlatformsConfig
from hermes.config.tool_catalog import TOOLSETS, tool_names, toolset_names
from hermes.cron.tools import cronjob_tool
from hermes.delegation.tool import delegate_tool
from hermes.home import home_from_path
from hermes.memory.facttools import fact_tools
from hermes.memory.tool import memory_tool
from hermes.messaging.outbound import Outbound
from hermes.messaging.tool import send_message_tool
from hermes.skills.tools import skill_tools
from hermes.tools.core import core_tools
from hermes.vision.tool import vision_analyze_tool
from hermes.voice.tool import text_to_speech_tool
from hermes.web.extract_tool import web_extract_tool
from hermes.web.search import web_search_tool

CODING = ["read_file", "write_file", "patch", "search_files", "terminal", "process", "todo",
          "clarify", "memory", "session_search", "skills_list", "skill_view", "skill_manage",
          "cronjob", "delegate_task", "web_search", "web_extract",
          "vision_analyze"]


@pytest.fixture
def llm(root: Path) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        write_fake_provider(root, fake.openai_base_url)
        yield fake


def sent_tools(hermes, llm: FakeLLM, *args: str, env: dict[str, str] | None = None) -> list[str]:
    llm.push(Reply(text="ok"))
    ok(hermes("chat", "-q", "hi", *args, env=env))
    return llm.requests[-1].tool_names


def test_chat_toolsets_takes_an_option_or_toolset_names(hermes, llm: FakeLLM) -> None:
    assert sorted(sent_tools(hermes, llm, "-t", "coding")) == sorted(CODING)
    assert sent_tools(hermes, llm, "-t", "file, terminal") == [
        "read_file", "write_file", "patch", "search_files", "terminal"]
    assert sent_tools(hermes, llm, "toolsets=todo,clarify") == ["todo", "clarify"]
    assert sent_tools(hermes, llm, "toolsets=minimal") == ["clarify", "memory"]


def test_hermes_toolsets_takes_the_same_names(hermes, llm: FakeLLM) -> None:
    assert sent_tools(hermes, llm, env={"HERMES_TOOLSETS": "file,terminal"}) == [
        "read_file", "write_file", "patch", "search_files", "terminal"]
    assert sorted(sent_tools(hermes, llm, env={"HERMES_TOOLSETS": "coding"})) == sorted(CODING)
    # the command line wins over the environment, whichever vocabulary each uses
    assert sent_tools(hermes, llm, "-t", "todo", env={"HERMES_TOOLSETS": "coding"}) == ["todo"]
    assert sent_tools(hermes, llm, "-t", "minimal", env={"HERMES_TOOLSETS": "todo"}) == [
        "clarify", "memory"]


@pytest.mark.parametrize(("args", "env", "fragments"), [
    (["-t", "nosuch"], {}, ['unknown toolset "nosuch"', "coding, default, minimal, research",
                           "file, memory, messaging, process"]),
    (["-t", "fiel,terminal"], {}, ['unknown toolset "fiel" (did you mean "file"?)']),
    (["-t", "codng"], {}, ['(did you mean "coding"?)']),
    (["-t", "coding,file"], {}, ['"coding" is a toolsets option and cannot be combined']),
    (["toolsets=nosuch"], {}, ["command line", 'unknown toolset "nosuch"']),
    ([], {"HERMES_TOOLSETS": "file,nosuch"}, ["environment HERMES_TOOLSETS",
                                              'unknown toolset "nosuch"']),
])
def test_unknown_toolsets_are_refused_before_any_model_call(hermes, llm: FakeLLM, args, env,
                                                            fragments) -> None:
    refused(hermes("chat", "-q", "hi", *args, env=env), *fragments)
    assert llm.requests == []


def test_config_refuses_unknown_toolset_and_tool_names(hermes, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    before = "# mine\n"
    (root / "config.yaml").write_text(before)
    refused(hermes("config", "set", "toolsets.enabled", "[file,nosuchtool]"),
            "toolsets.enabled", 'unknown toolset "nosuchtool"',
            "known toolsets: browser, clarify, core")
    refused(hermes("config", "set", "toolsets.disabled_tools", "[write_fil]"),
            "toolsets.disabled_tools", 'unknown tool "write_fil" (did you mean "write_file"?)')
    assert (root / "config.yaml").read_text() == before
    (root / "config.yaml").write_text("toolsets:\n  enabled: [file, nosuchtool]\n")
    refused(hermes("config", "validate"), str(root / "config.yaml"), "toolsets.enabled",
            'unknown toolset "nosuchtool"')
    doctor = hermes("doctor")
    assert doctor.exit_code == 1 and 'unknown toolset "nosuchtool"' in doctor.stdout
    (root / "config.yaml").write_text("toolsets:\n  enabled: [file, core]\n"
                                      "  disabled_tools: [patch]\n")
    ok(hermes("config", "validate"))


def test_the_catalogue_names_every_registered_tool() -> None:
    specs = [*core_tools(ripgrep=None), memory_tool(None), *fact_tools(None),  # type: ignore[arg-type]
             *skill_tools(None), cronjob_tool(None), delegate_tool(),  # type: ignore[arg-type]
             web_extract_tool(), web_search_tool(None, lambda: "off"),
             vision_analyze_tool(None, None, lambda: None),  # type: ignore[arg-type, return-value]
             text_to_speech_tool(None),
             send_message_tool(Outbound(PlatformsConfig(name="none"))),
             *browser_tools(BrowserService(home_from_path(Path("/nowhere")), BrowserConfig()))]
    registered = {spec.name: spec.toolset for spec in specs}
    declared = {tool: spec.name for spec in TOOLSETS for tool in spec.tools}
    assert registered == declared
    assert sorted(declared) == tool_names()
    assert {"file", "terminal", "memory", "skills", "session_search"} <= set(toolset_names())
