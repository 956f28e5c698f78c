"""Slash commands typed in the Chat page: the gateway's built-ins of the one table
(``hermes.agent.commands``: the page is a chat the way a platform's is, with the same
``/new``, ``/model``, ``/usage``, ``/stop``, ``/approve``, ``/deny``, ``/help``), then an
enabled plugin's command, then a skill (``chat_turn``: loaded into the turn)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hermes.agent.commands import Bound, bind, help_rows, parse, route, usage_line
from hermes.dashboard.pages.chat_runtimes import ChatRuntime, source_of
from hermes.sessions.errors import SessionNotFound

NEW = "\0new"
"""The reply of ``/new``: the page opens a new chat."""


@dataclass(frozen=True)
class Typed:
    """A command typed in the page of session ``session_id``."""

    runtime: ChatRuntime
    session_id: str
    text: str


def _new(typed: Typed) -> str:
    return NEW


def _model(typed: Typed) -> str:
    return typed.runtime.service.model_command(typed.session_id, parse(typed.text)[1])


def _usage(typed: Typed) -> str:
    try:
        session = typed.runtime.service.factory.deps.sessions.get_session(typed.session_id)
    except SessionNotFound:
        return "no conversation yet"
    return usage_line(session)


def _stop(typed: Typed) -> str:
    if typed.runtime.service.conversations.interrupt_session(typed.session_id):
        return "stopping the running turn"
    return "nothing is running"


def _answer(typed: Typed) -> str:
    return typed.runtime.approvals.answer(source_of(typed.session_id), typed.text)


def _help(typed: Typed) -> str:
    return "\n".join(f"{row.usage} — {row.text}" for row
                     in help_rows("gateway", typed.runtime.service.plugin_commands()))


def _link(typed: Typed) -> str:
    return "link your accounts in a direct message with the agent on a messaging platform"


def _voice(typed: Typed) -> str:
    return ("the page answers in text; /voice is for chats on messaging platforms "
            "(Telegram, Matrix, Discord, ...)")


COMMANDS: Bound[Callable[[Typed], str]] = bind("gateway", {
    "new": _new, "model": _model, "usage": _usage, "stop": _stop, "approve": _answer,
    "deny": _answer, "help": _help, "link": _link, "voice": _voice})
"""The page's built-in commands: the table's gateway entries."""


def builtin_reply(runtime: ChatRuntime, session_id: str, text: str) -> str | None:
    """The reply of a built-in command ``text`` (``NEW`` for ``/new``), else None: a
    plugin's command, a skill or the model's message. Blocking (a session read)."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    handler = COMMANDS.get(parse(text)[0])
    return handler(Typed(runtime, session_id, text)) if handler is not None else None


def is_plugin_command(runtime: ChatRuntime, text: str) -> bool:
    """Whether ``text`` is ``/name`` of an enabled plugin's command."""
    return text.startswith("/") and route(parse(text)[0], "gateway",
                                           runtime.service.plugin_commands()) == "plugin"
