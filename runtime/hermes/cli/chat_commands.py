"""Slash commands of the interactive chat."""

from __future__ import annotations

import sys
from typing import Any

from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import Agent


def run_command(text: str, agent: Agent, factory: AgentFactory, how: Interaction,
                last_user: str | None) -> tuple[Agent, str | None]:
    """Run ``/command``; returns the (possibly new) agent and the last user message."""
    name, _, arg = text[1:].partition(" ")
    arg = arg.strip()
    if name == "help":
        from hermes.cli.chat_repl import HELP

        _say(HELP)
    elif name == "new":
        agent = factory.new_session(how)
        _say(f"new session {agent.session_id[:8]}")
    elif name == "model":
        _model(agent, arg)
    elif name == "tools":
        _say("\n".join(f"  {n}" for n in agent.tools.names()) or "  (no tools)")
    elif name == "usage":
        _usage(agent)
    elif name in ("undo", "retry"):
        agent, last_user = _undo(agent, factory, how, last_user, retry=name == "retry")
    else:
        _say(f"unknown command /{name}; /help lists them")
    return agent, last_user


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _model(agent: Agent, name: str) -> None:
    if not name:
        _say(f"model: {agent.model.model}")
        return
    settings = getattr(agent.model, "settings", None)
    if settings is None:
        _say("this model client cannot switch models")
        return
    agent.model = type(agent.model)(settings.model_copy(update={"model": name}))  # type: ignore[call-arg]
    _say(f"model for this session: {name}")


def _usage(agent: Agent) -> None:
    session = agent.store.get_session(agent.session_id)
    cost = "unknown" if session.cost_usd is None else f"${session.cost_usd:.4f}"
    _say(f"tokens: {session.input_tokens} in, {session.output_tokens} out, "
         f"{session.cache_read_tokens} cached; cost {cost}")


def _undo(agent: Agent, factory: AgentFactory, how: Interaction, last_user: str | None,
          *, retry: bool) -> tuple[Agent, str | None]:
    """Continue in a child session without the last exchange (history stays append-only)."""
    cut = max((i for i, m in enumerate(agent.messages) if m.get("role") == "user"), default=None)
    if cut is None:
        _say("nothing to undo")
        return agent, last_user
    undone = agent.messages[cut].get("content")
    child = fork(agent, factory, how, agent.messages[:cut])
    if retry and isinstance(undone, str):
        from hermes.cli.chat_repl import _Printer, _run_interruptibly, _show

        _show(_run_interruptibly(child, undone), _Printer(), how.stream)
        return child, undone
    _say("undone the last exchange")
    return child, last_user


def fork(agent: Agent, factory: AgentFactory, how: Interaction,
         messages: list[dict[str, Any]]) -> Agent:
    store = agent.store
    parent = store.get_session(agent.session_id)
    child_id = store.create_session(parent.source, agent.model.model, parent_id=parent.id,
                                    system_prompt=parent.system_prompt)
    store.add_messages(child_id, [m for m in messages if m.get("role") != "system"])
    return factory.resume(child_id, how)
