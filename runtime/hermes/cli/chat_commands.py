"""Slash commands of the interactive chat; then enabled plugins' commands; any other
``/<name>`` that names a skill loads the skill into the turn (``skills/commands.py``)."""

from __future__ import annotations

import sys
from typing import Any

from hermes.agent.factory import AgentFactory, Interaction
from hermes.agent.loop import Agent
from hermes.agent.transcript import take_back_last_turn
from hermes.hints import for_profile


def run_command(text: str, agent: Agent, factory: AgentFactory, how: Interaction
                ) -> tuple[Agent, str | None]:
    """Run ``/command``; returns the (possibly new) agent and a message to send now
    (``/retry``), if any."""
    name, _, arg = text[1:].partition(" ")
    arg = arg.strip()
    if name == "help":
        from hermes.cli.chat_repl import HELP

        _say(for_profile(HELP + _plugin_help(factory), factory.deps.home.name))
    elif name == "new":
        from hermes.cli.chat_repl import end_session

        end_session(agent)
        agent.hooks.events.emit("on_session_reset", session_id=agent.session_id,
                                platform=agent.platform)
        agent = factory.new_session(how)
        _say(f"new session {agent.session_id[:8]}")
    elif name == "plugins":
        _say(_plugins(factory))
    elif name == "model":
        _model(agent, arg)
    elif name == "tools":
        _say("\n".join(f"  {n}" for n in agent.tools.names()) or "  (no tools)")
    elif name == "usage":
        _usage(agent)
    elif name == "undo":
        _undo(agent)
    elif name == "retry":
        return agent, _retry(agent)
    elif name in _plugin_commands(factory):
        _say(factory.deps.plugins.run_command(name, arg, agent))
    else:
        return agent, _skill(text, factory)
    return agent, None


def _plugin_commands(factory: AgentFactory) -> dict[str, Any]:
    host = factory.deps.plugins
    return host.registrations().commands if host is not None else {}


def _plugin_help(factory: AgentFactory) -> str:
    lines = [f"  /{name:<14} {command.description} (plugin {command.plugin})"
             for name, command in sorted(_plugin_commands(factory).items())]
    return "\n" + "\n".join(lines) if lines else ""


def _plugins(factory: AgentFactory) -> str:
    """``/plugins``: the loaded plugins, what each registered, the ones that failed."""
    host = factory.deps.plugins
    states = host.registrations().states if host is not None else []
    shown = [s for s in states if s.status in ("loaded", "failed", "missing env")]
    lines = [f"Plugins ({len(shown)}):"]
    for state in shown:
        mark = "✓" if state.status == "loaded" else "✗"
        lines.append(f"  {mark} {state.key}: {state.detail}")
    none = for_profile("no plugin is loaded (`hermes plugins list`)", factory.deps.home.name)
    return "\n".join(lines) if shown else none


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


def _undo(agent: Agent) -> None:
    """Take the last exchange out of this session (its tokens stay counted)."""
    if take_back_last_turn(agent) is None:
        _say("nothing to undo: this session has no exchange yet")
    else:
        _say("undone the last exchange")


def _retry(agent: Agent) -> str | None:
    """Take the last exchange out of this session; its message is sent again."""
    text = take_back_last_turn(agent)
    if not text:
        _say("nothing to retry: send a message first")
        return None
    _say(f"retrying: {_first_line(text)}")
    return text


def _first_line(text: str, limit: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
