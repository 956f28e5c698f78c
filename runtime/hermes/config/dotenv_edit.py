"""Edit a hand-written ``.env`` in place: one key's value changes, every other byte stays.

``set`` replaces only the value on the key's line (keeping an ``export``
prefix, the quoting style and an inline comment) or appends ``KEY=value`` at
the end; ``unset`` removes only the key's line. Comments, blank lines, order
and lines python-dotenv cannot parse are kept; the unparseable ones are
reported by line number so the user can fix them. Values are never shown.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from hermes.errors import ConfigError
from hermes.fsutil import atomic_write, private_dir

_SPACE = r"[^\S\r\n]"
_LINE = re.compile(
    rf"(?P<head>{_SPACE}*(?P<export>export{_SPACE}+)?(?:'[^']+'|[^=#\s]+){_SPACE}*=)"
    rf"(?:(?P<qspace>{_SPACE}*)(?P<quoted>'(?:\\'|[^'])*'|\"(?:\\\"|[^\"])*\")"
    rf"(?P<qtail>{_SPACE}*(?:#[^\r\n]*)?)"
    rf"|(?P<bare>[^\r\n]*?)(?P<tail>(?:{_SPACE}+#[^\r\n]*)?{_SPACE}*))"
    r"(?P<eol>\r\n|\n|\r|)\Z",
    re.DOTALL,
)
_BARE_SAFE = re.compile(r"[A-Za-z0-9_./:@+%,=~-]*")


@dataclass
class _Statement:
    text: str
    """The statement's text, with the blank lines before it."""
    key: str | None
    line: int
    """Line number where the statement itself starts (1-based)."""
    error: bool = False


@dataclass
class EnvEdit:
    """The result of one edit: the new text and the lines that could not be parsed."""

    text: str
    unparsed: list[int] = field(default_factory=list)


def _statements(text: str) -> list[_Statement]:
    from dotenv.parser import parse_stream

    result = []
    for binding in parse_stream(io.StringIO(text)):
        original = binding.original.string
        leading = original[: len(original) - len(original.lstrip())]
        result.append(_Statement(original, binding.key, binding.original.line
                                 + leading.count("\n"), binding.error))
    return result


def _quote(value: str, style: str) -> str:
    if style == '"':
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if style == "" and _BARE_SAFE.fullmatch(value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _replace_value(statement: str, name: str, value: str) -> str:
    """``statement`` with its value replaced; layout, prefix and comment kept."""
    body = statement.lstrip()
    leading = statement[: len(statement) - len(body)]
    match = _LINE.match(body)
    if match is None:  # e.g. `KEY` without `=`: write the binding afresh
        export = "export " if body.startswith("export") else ""
        eol = "\n" if body.endswith(("\n", "\r")) else ""
        return f"{leading}{export}{name}={_quote(value, '')}{eol}"
    if match["quoted"] is not None:
        new = match["qspace"] + _quote(value, match["quoted"][0]) + match["qtail"]
    else:
        bare = match["bare"]
        new = bare[: len(bare) - len(bare.lstrip())] + _quote(value, "") + match["tail"]
    return leading + match["head"] + new + match["eol"]


def set_in_text(text: str, name: str, value: str) -> EnvEdit:
    """Set ``name`` in ``.env`` text: its last binding's value, else a new last line."""
    statements = _statements(text)
    unparsed = [s.line for s in statements if s.error]
    bound = [s for s in statements if s.key == name]
    if bound:
        bound[-1].text = _replace_value(bound[-1].text, name, value)
        new_text = "".join(s.text for s in statements)
    else:
        separator = "\n" if text and not text.endswith(("\n", "\r")) else ""
        new_text = f"{text}{separator}{name}={_quote(value, '')}\n"
    _check(new_text, name, value)
    return EnvEdit(new_text, unparsed)


def unset_in_text(text: str, name: str) -> EnvEdit | None:
    """Remove every binding of ``name``; ``None`` when it has none."""
    statements = _statements(text)
    if not any(s.key == name for s in statements):
        return None
    kept = [s.text[: len(s.text) - len(s.text.lstrip())] if s.key == name else s.text
            for s in statements]
    return EnvEdit("".join(kept), [s.line for s in statements if s.error])


def _check(text: str, name: str, value: str) -> None:
    """The edited text must give ``name`` exactly ``value`` (never shown: it is a secret)."""
    from dotenv.parser import parse_stream

    values = [b.value for b in parse_stream(io.StringIO(text)) if b.key == name]
    if not values or values[-1] != value:
        raise ConfigError("cannot write this value to .env — check the file's syntax",
                          key=name)


def unparsed_notes(path: Path, lines: list[int], status: str = "left as it is") -> list[str]:
    return [f"warning: {path}:{line}: cannot parse this line; it is {status} — write it as "
            "KEY=value or comment it out with #" for line in lines]


def env_file_notes(path: Path) -> list[str]:
    """Warnings for the lines of the ``.env`` at ``path`` that are skipped when it is read."""
    return unparsed_notes(path, unparsed_lines(path), "ignored")


def unparsed_lines(path: Path) -> list[int]:
    """Line numbers (1-based) of the ``.env`` at ``path`` that cannot be parsed."""
    return [s.line for s in _statements(read_text(path)) if s.error]


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def set_secret(path: Path, name: str, value: str) -> list[str]:
    """Set ``name`` in the ``.env`` at ``path`` (atomic, 0600); notes about the file."""
    edit = set_in_text(read_text(path), name, value)
    private_dir(path.parent)
    atomic_write(path, edit.text, mode=0o600)
    return unparsed_notes(path, edit.unparsed)


def unset_secret(path: Path, name: str) -> list[str]:
    """Remove ``name`` from the ``.env`` at ``path``; a ``ConfigError`` if it is not there."""
    edit = unset_in_text(read_text(path), name)
    if edit is None:
        raise ConfigError(f"{name} is not set", source=str(path))
    atomic_write(path, edit.text, mode=0o600)
    return unparsed_notes(path, edit.unparsed)
