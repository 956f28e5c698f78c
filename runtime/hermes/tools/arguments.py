"""Repair the argument strings models send with tool calls, or reject them clearly.

Models emit almost-JSON: an empty string for "no arguments", trailing commas,
objects cut off before their closing braces, raw newlines or tabs inside
strings, or the whole object wrapped in a markdown code fence. Each of these
is repaired; anything else becomes an ``ArgumentError`` whose message tells
the model what to send instead. Nothing else ever escapes ``parse_arguments``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hermes.errors import ToolError

# Larger argument strings are refused rather than repaired: nobody needs them,
# and the repair scanner should stay cheap.
MAX_ARGUMENT_CHARS = 2_000_000
FENCE = re.compile(r"^```[\w-]*[ \t]*\r?\n?(.*?)\r?\n?[ \t]*```$", re.DOTALL)
CLOSERS = {"{": "}", "[": "]"}
HINT = 'send the arguments as one JSON object, e.g. {"path": "notes.txt"}'


class ArgumentError(ToolError):
    """Tool-call arguments that cannot be parsed into a JSON object."""


def parse_arguments(raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Parse (and if need be repair) tool-call arguments into a dict.

    Raises ``ArgumentError`` and nothing else.
    """
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if not isinstance(raw, str):
        raise ArgumentError(f"arguments must be a JSON string, got {type(raw).__name__}; {HINT}")
    text = strip_fence(raw.strip())
    if not text:
        return {}
    if len(text) > MAX_ARGUMENT_CHARS:
        raise ArgumentError(f"arguments are too long ({len(text)} characters); {HINT}")
    value = _loads(text)
    if value is _FAILED:
        value = _loads(repair_json(text))
    if value is _FAILED:
        raise ArgumentError(f"could not parse the arguments as JSON: {_reason(text)}; {HINT}")
    if not isinstance(value, dict):
        raise ArgumentError(f"arguments must be a JSON object, got {_json_type(value)}; {HINT}")
    return value


def strip_fence(text: str) -> str:
    """The inside of a markdown code fence (```json ... ```), or ``text`` unchanged."""
    match = FENCE.match(text)
    return match.group(1).strip() if match else text


_FAILED = object()


def _loads(text: str) -> Any:
    # strict=False accepts raw control characters (newlines, tabs) inside strings.
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return _FAILED


def _reason(text: str) -> str:
    try:
        json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at character {exc.pos}"
    except (ValueError, RecursionError):
        return "it is nested too deeply"
    return "unknown problem"


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def repair_json(text: str) -> str:
    """Drop trailing commas, escape control characters in strings, and close
    an unterminated string and any unclosed brackets or braces."""
    out: list[str] = []
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            in_string, escaped = _string_char(char, escaped, out)
        elif char == '"':
            in_string = True
            out.append(char)
        elif char in CLOSERS:
            stack.append(CLOSERS[char])
            out.append(char)
        elif char in "}]":
            _close(char, stack, out)
        else:
            out.append(char)
    if in_string:
        out.append("\\" if escaped else "")
        out.append('"')
    while stack:
        _drop_trailing_comma(out)
        out.append(stack.pop())
    return "".join(out)


def _string_char(char: str, escaped: bool, out: list[str]) -> tuple[bool, bool]:
    """Copy one character inside a string; return (still in string, escaped)."""
    if escaped:
        out.append(char)
        return True, False
    if char == "\\":
        out.append(char)
        return True, True
    if char == '"':
        out.append(char)
        return False, False
    out.append(json.dumps(char)[1:-1] if char < " " else char)
    return True, False


def _close(char: str, stack: list[str], out: list[str]) -> None:
    """Close ``char``'s bracket, closing any unclosed inner ones first."""
    if char not in stack:
        out.append(char)  # a stray closer: leave it for json to report
        return
    while stack:
        _drop_trailing_comma(out)
        expected = stack.pop()
        out.append(expected)
        if expected == char:
            return


def _drop_trailing_comma(out: list[str]) -> None:
    index = len(out) - 1
    while index >= 0 and out[index].isspace():
        index -= 1
    if index >= 0 and out[index] == ",":
        del out[index]
