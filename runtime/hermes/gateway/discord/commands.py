"""The bot's slash commands: the gateway's built-ins from the one table
(``hermes.agent.commands``), the enabled plugins' commands and the profile's skills, as
Discord application commands; and an invocation back as the text ``/name argument``.

Each command takes one optional text option (``/approve session``, ``/model NAME``, a
skill's request). Discord allows 100 commands of 1-32 lower-case letters, digits, ``-``
and ``_``; names it would refuse are left out (they still work typed as a message).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hermes.agent.commands import for_door

MAX_COMMANDS = 100
MAX_DESCRIPTION = 100
NAME = re.compile(r"[-_a-z0-9]{1,32}")
OPTION = "text"
CHAT_INPUT = 1
STRING = 3


def command_payloads(extra: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """The payload of ``PUT /applications/{id}/commands``: the built-ins (and their
    aliases), then ``extra`` (name, description) pairs, within Discord's limits."""
    rows = [(name, b.door_help.get("gateway", (b.args, b.help))) for b in for_door("gateway")
            for name in b.names()]
    seen: set[str] = set()
    payloads: list[dict[str, Any]] = []
    for name, (args, text) in [*rows, *((name, ("[request]", text)) for name, text in extra)]:
        if name in seen or not NAME.fullmatch(name) or len(payloads) >= MAX_COMMANDS:
            continue
        seen.add(name)
        payloads.append(_payload(name, text, args))
    return payloads


def _payload(name: str, text: str, args: str) -> dict[str, Any]:
    payload: dict[str, Any] = {"name": name, "type": CHAT_INPUT,
                               "description": _clip(text or name)}
    if args:
        payload["options"] = [{"type": STRING, "name": OPTION, "required": False,
                               "description": _clip(args.strip("[]") or "what to add")}]
    return payload


def _clip(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= MAX_DESCRIPTION else \
        one_line[:MAX_DESCRIPTION - 1] + "…"


def invocation_text(data: dict[str, Any]) -> str | None:
    """The ``/name argument`` an application command interaction stands for (None for any
    other interaction)."""
    name = data.get("name")
    if data.get("type", CHAT_INPUT) != CHAT_INPUT or not isinstance(name, str):
        return None
    values = [str(option.get("value", "")) for option in data.get("options") or []
              if isinstance(option, dict)]
    return " ".join([f"/{name}", *[v for v in values if v.strip()]])
