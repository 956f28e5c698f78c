"""Webhook prompt templates: ``{field.path}`` filled from the delivery's JSON payload.

``New issue {issue.title} by {sender.login}`` takes ``payload["issue"]["title"]`` and
``payload["sender"]["login"]``; a number steps into a list (``{commits.0.message}``);
``{{`` and ``}}`` are literal braces. Objects and lists are written as JSON. A field
the payload lacks is an error naming it and what is there instead, never an empty
string.
"""

from __future__ import annotations

import json
import re
from typing import Any

FIELD = re.compile(r"^[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*$")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
MAX_LISTED = 8


class TemplateError(ValueError):
    """A template that cannot be parsed, or a payload that lacks one of its fields."""


def parse_template(template: str) -> list[str | tuple[str, ...]]:
    """The template as literal text and field paths, in order; ``TemplateError`` names
    the first problem."""
    parts: list[str | tuple[str, ...]] = []
    position = 0
    for match in _TOKEN.finditer(template):
        parts.append(template[position:match.start()])
        position = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        elif token in ("{", "}"):
            raise TemplateError(f"unmatched {token!r} at character {match.start() + 1} "
                                "(write {{ or }} for a literal brace)")
        elif not FIELD.match(name := match.group(1).strip()):
            raise TemplateError(f"{{{match.group(1)}}} is not a field path (letters, digits, "
                                "_ and -, joined by dots, e.g. {issue.title})")
        else:
            parts.append(tuple(name.split(".")))
    parts.append(template[position:])
    return [p for p in parts if p != ""]


def render(parts: list[str | tuple[str, ...]], payload: Any) -> str:
    """The template filled from ``payload``; ``TemplateError`` names a missing field."""
    return "".join(part if isinstance(part, str) else _text(_lookup(payload, part))
                   for part in parts)


def _lookup(payload: Any, path: tuple[str, ...]) -> Any:
    value = payload
    for depth, key in enumerate(path):
        here = ".".join(path[:depth]) or "the payload"
        if isinstance(value, dict):
            if key not in value:
                raise TemplateError(f"template field {'.'.join(path)}: {here} has no "
                                    f"{key!r} (it has: {_keys(value)})")
            value = value[key]
        elif isinstance(value, list) and key.isdigit():
            if int(key) >= len(value):
                raise TemplateError(f"template field {'.'.join(path)}: {here} has "
                                    f"{len(value)} item(s), no item {key}")
            value = value[int(key)]
        else:
            raise TemplateError(f"template field {'.'.join(path)}: {here} is "
                                f"{_kind(value)}, not an object with {key!r}")
    return value


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _keys(value: dict[str, Any]) -> str:
    keys = sorted(str(k) for k in value)
    shown = ", ".join(keys[:MAX_LISTED])
    return (shown + f", ... {len(keys) - MAX_LISTED} more") if len(keys) > MAX_LISTED else \
        shown or "nothing"


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "null" if value is None else f"a {type(value).__name__}"
