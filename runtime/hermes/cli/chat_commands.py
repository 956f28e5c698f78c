"""Slash commands of the interactive chat: the chat's entries of the one table
(``hermes.agent.commands``) bound to their handlers here; then enabled plugins'
commands; any other ``/<name>`` that names a skill loads the skill into the turn
(``skills/commands.py``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes.agent.attachments import ImageRefused, from_path
from hermes.agent.commands import (
    Bound,
    bind,
    builtin,
    help_rows,
    parse,
    route,
    usage_line,
)
from hermes.agent.conversations import Conversation, Conversations, model_name_problem
from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import Agent
from hermes.agent.transcript import last_turn_images, take_back_last_turn
from hermes.hints import for_profile

KEYS = "Enter sends; Esc then Enter (or Alt-Enter) inserts a newline. Ctrl-C interrupts " \
    "the agent."
Outcome = tuple[Conversation, str | None]
"""The (possibly new) conversation, and a message to send now (``/retry``), if any."""


@dataclass(frozen=True)
class _Call:
    conversation: Conversation
    conversations: Conversations
    how: Interaction
    argument: str

    @property
    def agent(self) -> Agent:
        return self.conversation.agent

    @property
    def factory(self) -> AgentFactory:
        return self.conversations.factory


def run_command(text: str, conversation: Conversation, conversations: Conversations,
                how: Interaction) -> Outcome:
    """Run ``/command``; returns the (possibly new) conversation and a message to send
    now (``/retry``), if any."""
    name, argument = parse(text)
    factory = conversations.factory
    plugins = _plugin_commands(factory)
    found = route(name, "chat", plugins)
    if found == "builtin":
        handler = COMMANDS.get(name)
        assert handler is not None  # the table and the binding agree (bind checks)
        return handler(_Call(conversation, conversations, how, argument))
    if found == "plugin":
        _say(factory.deps.plugins.run_command(name, argument, conversation.agent))
        return conversation, None
    return conversation, _skill(text, factory)


def one_shot_command(text: str, conversation: Conversation, conversations: Conversations
                     ) -> tuple[str | None, str]:
    """A one-shot's ``/name [argument]``, routed by the table as in the chat: ``(reply,
    text)`` — an enabled plugin's command answers (``reply``); ``/<skill> [request]`` is
    the turn with that skill loaded (``text``); anything else is asked as it is."""
    if not text.startswith("/") or text.startswith("//"):
        return None, text
    name, argument = parse(text)
    factory = conversations.factory
    found = route(name, "chat", _plugin_commands(factory))
    if found == "plugin":
        return str(factory.deps.plugins.run_command(name, argument, conversation.agent)), text
    if found == "builtin":
        return None, text
    from hermes.skills.commands import skill_turn

    turn = skill_turn(factory.deps.skills, text)
    if turn is None:
        return None, text
    sys.stderr.write(f"loaded skill {turn.skill.name}\n")
    return None, turn.message


def leaves(text: str) -> bool:
    """Whether ``text`` is ``/exit`` (or an alias): the chat ends before any dispatch."""
    return text.strip().startswith("/") and builtin(parse(text)[0], "chat") is _EXIT


def _plugin_commands(factory: AgentFactory) -> dict[str, Any]:
    host = factory.deps.plugins
    return host.registrations().commands if host is not None else {}


def _help(call: _Call) -> Outcome:
    lines = [f"  {row.usage:<15} {row.text}" + (f" (plugin {row.plugin})" if row.plugin else "")
             for row in help_rows("chat", _plugin_commands(call.factory))]
    _say(for_profile("\n".join(["Commands:", *lines, KEYS]), call.factory.deps.home.name))
    return call.conversation, None


def _new(call: _Call) -> Outcome:
    agent = call.agent
    call.conversation.end()  # as the chat ends a session: one the model never answered goes
    agent.bus.emit("on_session_reset", session_id=agent.session_id, platform=agent.platform)
    conversation = call.conversations.open(call.how)
    _say(f"new session {conversation.session_id[:8]}")
    return conversation, None


def _plugins(call: _Call) -> Outcome:
    """``/plugins``: the loaded plugins, what each registered, the ones that failed."""
    host = call.factory.deps.plugins
    states = host.registrations().states if host is not None else []
    shown = [s for s in states if s.status in ("loaded", "failed", "missing env")]
    lines = [f"Plugins ({len(shown)}):"]
    for state in shown:
        mark = "✓" if state.status == "loaded" else "✗"
        lines.append(f"  {mark} {state.key}: {state.detail}")
    none = for_profile("no plugin is loaded (`hermes plugins list`)",
                       call.factory.deps.home.name)
    _say("\n".join(lines) if shown else none)
    return call.conversation, None


def _skill(text: str, factory: AgentFactory) -> str | None:
    """``/<skill> [request]``: the turn that carries the skill, or None if no such skill."""
    from hermes.skills.commands import skill_turn

    turn = skill_turn(factory.deps.skills, text)
    if turn is None:
        _say(for_profile(f"unknown command {text.split()[0]}; /help lists them "
                         "(and `hermes skills list` the skills)", factory.deps.home.name))
        return None
    _say(f"loaded skill {turn.skill.name}")
    return turn.message


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _model(call: _Call) -> Outcome:
    agent, name = call.agent, call.argument
    if not name:
        _say(f"model: {agent.model.model}")
    elif (problem := model_name_problem(name)) is not None:
        _say(problem)
    elif not call.conversation.switch_model(name):
        _say("this model client cannot switch models")
    else:
        _say(f"model for this session: {name} (new sessions use the profile's)")
    return call.conversation, None


def _tools(call: _Call) -> Outcome:
    _say("\n".join(f"  {n}" for n in call.agent.tools.names()) or "  (no tools)")
    return call.conversation, None


def _usage(call: _Call) -> Outcome:
    _say(usage_line(call.agent.store.get_session(call.agent.session_id)))
    return call.conversation, None


def _undo(call: _Call) -> Outcome:
    """Take the last exchange out of this session (its tokens stay counted)."""
    if take_back_last_turn(call.agent) is None:
        _say("nothing to undo: this session has no exchange yet")
    else:
        _say("undone the last exchange")
    return call.conversation, None


def _retry(call: _Call) -> Outcome:
    """Take the last exchange out of this session; its message is sent again."""
    images = last_turn_images(call.agent, call.conversation.vision_limits())
    text = take_back_last_turn(call.agent)
    if not text:
        _say("nothing to retry: send a message first")
        return call.conversation, None
    for image in images:  # sent again with the text, as the first time
        call.conversation.attach(image)
    _say(f"retrying: {_first_line(text)}")
    return call.conversation, text


def _image(call: _Call) -> Outcome:
    """``/image PATH``: attach the user's image file to the next message they send."""
    conversation, path = call.conversation, call.argument.strip().strip("'\"")
    if not path:
        attached = [image.source for image in conversation.attached]
        _say("attached to your next message: " + ", ".join(attached) if attached else
             "no image attached; /image PATH attaches one to your next message")
        return conversation, None
    try:
        image = conversation.attach(from_path(path, conversation.vision_limits()))
    except ImageRefused as exc:
        _say(str(exc))
        return conversation, None
    _say(f"attached {image.source} ({image.mime}, {len(image.data):,} bytes) to your "
         "next message")
    return conversation, None


def _exit(call: _Call) -> Outcome:
    """The chat loop leaves before dispatching ``/exit`` (``leaves``); nothing to do."""
    return call.conversation, None


def _first_line(text: str, limit: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


COMMANDS: Bound[Callable[[_Call], Outcome]] = bind("chat", {
    "new": _new, "model": _model, "tools": _tools, "usage": _usage, "retry": _retry,
    "undo": _undo, "image": _image, "plugins": _plugins, "help": _help, "exit": _exit})
_EXIT = builtin("exit", "chat")
