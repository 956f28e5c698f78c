"""The slash commands: one table for every front door.

``/<name> [argument]`` typed in the chat or sent from a gateway platform is, in this
order: a built-in command of that front door (``BUILTINS``: each front door binds the
entries that apply to it to its own handlers with ``bind``, which refuses a binding
that names more or fewer commands than the table gives it), an enabled plugin's
command (a plugin may not take a built-in name, of any front door, aliases included:
``refusal``), else a skill of that name loaded into the turn (``skills/commands.py``)
or an unknown command. Each front door's ``/help`` lists ``help_rows``. ACP has no
slash commands: an editor's prompt is the user's message as typed.

It imports nothing of a front door, plugins or skills: they all read it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NamedTuple, TypeVar

Door = Literal["chat", "gateway", "acp"]
DOORS: tuple[Door, ...] = ("chat", "gateway", "acp")
Route = Literal["builtin", "plugin", "other"]
H = TypeVar("H")


@dataclass(frozen=True)
class Builtin:
    """A built-in slash command."""

    name: str
    help: str
    doors: frozenset[Door]
    """The front doors it works in."""
    aliases: tuple[str, ...] = ()
    args: str = ""
    """What may follow the name, as shown in help (``[NAME]``)."""
    door_help: Mapping[Door, tuple[str, str]] = field(default_factory=dict)
    """``(args, help)`` on a front door where it does more or less than ``help`` says."""

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def row(self, door: Door) -> HelpRow:
        args, text = self.door_help.get(door, (self.args, self.help))
        usage = " or ".join(f"/{name}" for name in self.names())
        return HelpRow(f"{usage} {args}".rstrip(), text)


class HelpRow(NamedTuple):
    """One line of a ``/help``: how to type it, what it does, whose it is."""

    usage: str
    text: str
    plugin: str | None = None


CHAT: frozenset[Door] = frozenset({"chat"})
GATEWAY: frozenset[Door] = frozenset({"gateway"})
BOTH: frozenset[Door] = frozenset({"chat", "gateway"})

BUILTINS: tuple[Builtin, ...] = (
    Builtin("new", "start a new conversation", BOTH, aliases=("reset",)),
    Builtin("model", "show the model, or switch it for the rest of this conversation "
            "(new conversations use the profile's)", BOTH, args="[NAME]"),
    Builtin("tools", "list the tools the model can use", CHAT),
    Builtin("usage", "tokens and cost of this conversation", BOTH),
    Builtin("retry", "send your last message again", CHAT),
    Builtin("undo", "forget the last exchange", CHAT),
    Builtin("image", "attach an image (PNG, JPEG, GIF, WebP) to your next message; "
            "without PATH, list what is attached", CHAT, args="[PATH]"),
    Builtin("stop", "interrupt the running turn", GATEWAY),
    Builtin("voice", "answers in this chat as text (off), text and speech (on) or speech "
            "alone (only); voice messages you send are transcribed", GATEWAY,
            args="[on|off|only]"),
    Builtin("approve", "allow the command the agent asks to run (once, for the session "
            "or always)", GATEWAY, args="[session|always]"),
    Builtin("deny", "refuse the command the agent asks to run", GATEWAY),
    Builtin("link", "make your other account the same user: /link here, then /link CODE "
            "from there", GATEWAY, args="[CODE]"),
    Builtin("plugins", "the plugins loaded, and what each registered", CHAT),
    Builtin("help", "this list", BOTH),
    Builtin("exit", "leave (Ctrl-D works too)", CHAT, aliases=("quit",)),
)
"""Every built-in slash command, in the order ``/help`` lists them."""

SKILL_ROWS: Mapping[Door, HelpRow] = {
    "chat": HelpRow("/<skill> [ask]", "load a skill into this turn (hermes skills list)"),
    "gateway": HelpRow("/<skill> [request]", "load a skill into this turn")}
"""Where ``/<skill> [request]`` loads a skill into the turn, as its ``/help`` says it."""


def for_door(door: Door) -> tuple[Builtin, ...]:
    """The built-in commands that work in ``door``."""
    return tuple(b for b in BUILTINS if door in b.doors)


def builtin(name: str, door: Door) -> Builtin | None:
    """The built-in command ``/name`` (or an alias of it) in ``door``."""
    return next((b for b in for_door(door) if name in b.names()), None)


def parse(text: str) -> tuple[str, str]:
    """``/Name  the rest`` as ``("name", "the rest")``."""
    parts = text.strip()[1:].split(maxsplit=1)
    return (parts[0].lower() if parts else "", parts[1].strip() if len(parts) > 1 else "")


def route(name: str, door: Door, plugin_commands: Mapping[str, Any]) -> Route:
    """Who answers ``/name`` in ``door``: a built-in, a plugin, or (``other``) a skill of
    that name or nobody."""
    if builtin(name, door) is not None:
        return "builtin"
    return "plugin" if name in plugin_commands else "other"


def help_rows(door: Door, plugin_commands: Mapping[str, Any]) -> list[HelpRow]:
    """``/help`` of ``door``: its built-ins, the enabled plugins' commands (objects with a
    ``description`` and a ``plugin``), then skills."""
    rows = [b.row(door) for b in for_door(door)]
    rows += [HelpRow(f"/{name}", command.description, command.plugin)
             for name, command in sorted(plugin_commands.items())]
    return rows + ([SKILL_ROWS[door]] if door in SKILL_ROWS else [])


def refusal(name: str) -> str | None:
    """Why a plugin may not register ``/name``: a built-in's name in some front door."""
    taken = next((b for b in BUILTINS if name in b.names()), None)
    if taken is None:
        return None
    doors = " and ".join(d for d in DOORS if d in taken.doors)
    return f"/{name} is a built-in command of {doors}"


class Bound(Generic[H]):
    """A front door's handlers of its built-in commands, by name and alias."""

    def __init__(self, door: Door, handlers: Mapping[str, H]):
        wanted = {b.name for b in for_door(door)}
        if set(handlers) != wanted:
            missing, extra = sorted(wanted - set(handlers)), sorted(set(handlers) - wanted)
            raise RuntimeError(f"{door}: no handler for the slash commands {missing}; "
                               f"handlers for {extra}, not in the table (agent/commands.py)")
        self.door = door
        self._by_name = {name: handlers[b.name] for b in for_door(door) for name in b.names()}

    def get(self, name: str) -> H | None:
        return self._by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)


def usage_line(session: Any) -> str:
    """``/usage`` of every front door: a session's tokens and cost (a stored ``Session``)."""
    cost = "unknown" if session.cost_usd is None else f"${session.cost_usd:.4f}"
    return (f"tokens: {session.input_tokens} in, {session.output_tokens} out, "
            f"{session.cache_read_tokens} cached; cost {cost}")


def bind(door: Door, handlers: Mapping[str, H]) -> Bound[H]:
    """``handlers`` (one per built-in command of ``door``, by name) bound to the table."""
    return Bound(door, handlers)
