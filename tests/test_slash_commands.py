"""The one table of slash commands (``hermes.agent.commands``) is what every front door
answers and lists: the chat and the gateway on a real runtime against the fake LLM,
a plugin that tries a built-in's name, a front door binding other commands than the
table gives it."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import write_fake_provider
from fakellm import FakeLLM
from hermes.agent.commands import Door, bind, for_door
from hermes.agent.conversations import Conversations
from hermes.agent.factory import Interaction
from hermes.cli.chat_commands import leaves, run_command
from hermes.config import compose_config
from hermes.container import Runtime, build_runtime
from hermes.gateway.base import MessageEvent, MessageSource
from hermes.gateway.router import SessionRouter
from hermes.gateway.service import ProfileService
from hermes.home import home_from_path
from plugin_support import write_plugin

HOW = Interaction()
HELLO = """\
def register(ctx):
    ctx.register_command("hello", lambda arg: "hi " + arg, description="Say hi")
"""
CLASH = """\
def register(ctx):
    for name in ("reset", "QUIT", "stop", "hello"):
        ctx.register_command(name, lambda arg: "mine", description="Clash")
"""


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(strict=False) as fake:
        yield fake


def runtime_of(root: Path, environ: dict[str, str], llm: FakeLLM, plugin: str) -> Runtime:
    write_fake_provider(root, llm.openai_base_url)
    write_plugin(root, plugin, HELLO if plugin == "greeter" else CLASH)
    home = home_from_path(root).ensure()
    config = compose_config(home, environ, [f"plugins.enabled=[{plugin}]"]).config
    return build_runtime(home, config, environ)


def chat(runtime: Runtime, capsys: pytest.CaptureFixture[str], *texts: str) -> list[str]:
    """What the chat printed for each of ``texts``."""
    conversations: Conversations = runtime.container.conversations()
    conversation = conversations.open(HOW)
    printed = []
    for text in texts:
        conversation, _ = run_command(text, conversation, conversations, HOW)
        printed.append(capsys.readouterr().out)
    return printed


class Chat:
    """A gateway platform in memory: the router's replies."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, source: MessageSource, text: str) -> None:
        self.sent.append(text)

    async def typing(self, source: MessageSource) -> None:
        pass


def gateway(runtime: Runtime, *texts: str) -> list[str]:
    """The gateway's reply to each of ``texts`` (commands: answered at once)."""
    router = SessionRouter(ProfileService(runtime.home, runtime, logging.getLogger("test")))
    platform = Chat()
    router.adapters["chat"] = platform  # type: ignore[assignment]

    async def say_all() -> None:
        for text in texts:
            await router.handle(MessageEvent(MessageSource("chat", "c1", user_id="u1"), text))

    asyncio.run(say_all())
    assert len(platform.sent) == len(texts), platform.sent
    return platform.sent


def listed(help_text: str) -> set[str]:
    """The commands a ``/help`` names: each line's first word and its ``or /alias``."""
    names = set()
    for line in help_text.splitlines():
        usage = re.match(r"\s*(/\S+(?: or /\S+)*)", line)
        if usage:
            names.update(usage.group(1).split(" or "))
    return names


def table(door: Door) -> set[str]:
    return {f"/{name}" for command in for_door(door) for name in command.names()}


def test_each_front_door_s_help_lists_exactly_the_table_s_entries_for_it(
        root: Path, environ: dict[str, str], llm: FakeLLM, capsys) -> None:
    with runtime_of(root, environ, llm, "greeter") as runtime:
        [chat_help] = chat(runtime, capsys, "/help")
        [gateway_help] = gateway(runtime, "/help")
    assert listed(chat_help) == table("chat") | {"/hello", "/<skill>"}
    assert listed(gateway_help) == table("gateway") | {"/hello", "/<skill>"}
    assert "/hello          Say hi (plugin greeter)" in chat_help
    assert "/hello — Say hi" in gateway_help
    assert table("acp") == set()  # an editor's prompt is the user's message as typed


def test_every_command_of_the_table_works_where_it_applies_and_only_there(
        root: Path, environ: dict[str, str], llm: FakeLLM, capsys) -> None:
    in_chat = sorted(table("chat") - {"/exit", "/quit"})  # the chat loop leaves on those
    in_gateway = sorted(table("gateway"))
    with runtime_of(root, environ, llm, "greeter") as runtime:
        chat_replies = chat(runtime, capsys, *in_chat, *(n.upper() for n in in_chat),
                            "/stop", "/approve", "/hello you")
        gateway_replies = gateway(runtime, *in_gateway, "/tools", "/undo", "/hello you")
    *known, stop, approve, hello = chat_replies
    assert [(n, r) for n, r in zip(in_chat * 2, known, strict=True) if "unknown command" in r] == []
    assert "unknown command /stop" in stop and "unknown command /approve" in approve
    assert hello == "hi you\n"
    *known, tools, undo, hello = gateway_replies
    assert [(n, r) for n, r in zip(in_gateway, known, strict=True) if "unknown command" in r] == []
    assert "unknown command /tools" in tools and "unknown command /undo" in undo
    assert hello == "hi you"
    assert leaves("/exit") and leaves(" /QUIT ") and not leaves("/exits")


def test_a_plugin_command_named_like_a_built_in_is_refused_with_one_line(
        root: Path, environ: dict[str, str], llm: FakeLLM, capsys) -> None:
    with runtime_of(root, environ, llm, "clash") as runtime:
        commands = runtime.container.plugins().registrations().commands
        warnings = [line for line in capsys.readouterr().err.splitlines()
                    if "clash" in line]
    assert sorted(commands) == ["hello"]
    assert warnings == [
        "warning: plugin clash: /reset is a built-in command of chat and gateway; "
        "its /reset is ignored",
        "warning: plugin clash: /quit is a built-in command of chat; its /quit is ignored",
        "warning: plugin clash: /stop is a built-in command of gateway; its /stop is ignored"]


def test_a_front_door_binding_other_commands_than_the_table_is_refused() -> None:
    handlers = {command.name: print for command in for_door("gateway")}
    assert "stop" in bind("gateway", handlers) and "reset" in bind("gateway", handlers)
    with pytest.raises(RuntimeError, match=r"gateway: no handler for the slash commands "
                       r"\['stop'\]; handlers for \['tools'\], not in the table"):
        bind("gateway", {**{k: v for k, v in handlers.items() if k != "stop"},
                         "tools": print})
