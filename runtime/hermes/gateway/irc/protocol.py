"""IRC lines (RFC 1459/2812 with IRCv3 message tags): parsing, writing, and text made fit
for them (formatting codes out, one message per line, under the 512-byte limit)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hermes.gateway.messaging.text import split_text

MAX_LINE = 512
"""Bytes of one line, CR LF included (RFC 1459 2.3), as the server relays it."""
UNKNOWN_PREFIX = 1 + 30 + 1 + 10 + 1 + 63 + 1
"""``:nick!user@host `` at its longest, while the server has not shown our own mask."""
FORMATTING = re.compile(r"\x03(?:\d{1,2}(?:,\d{1,2})?)?|\x04(?:[0-9a-fA-F]{6}"
                        r"(?:,[0-9a-fA-F]{6})?)?|[\x00-\x08\x0b-\x1f\x7f]")
"""Bold, colours, italics, reverse, reset, CTCP's \\x01 and every other control."""
MARKDOWN = ((re.compile(r"^```.*$\n?", re.M), ""), (re.compile(r"^#{1,6}\s+", re.M), ""),
            (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
            (re.compile(r"`([^`\n]+)`"), r"\1"),
            (re.compile(r"\[([^\]\n]+)\]\((\S+?)\)"), r"\1 (\2)"))
TAG_ESCAPES = {":": ";", "s": " ", "\\": "\\", "r": "\r", "n": "\n"}


class ProtocolError(ValueError):
    """A line that cannot be written (a parameter with a line break or a space)."""


@dataclass(frozen=True)
class Line:
    """One line from the server."""

    command: str
    params: list[str] = field(default_factory=list)
    source: str = ""
    """``nick!user@host`` or a server name (empty: the server itself)."""
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def nick(self) -> str:
        return self.source.split("!", 1)[0]

    def param(self, index: int) -> str:
        return self.params[index] if len(self.params) > index else ""


def parse(raw: str) -> Line:
    """A received line (without CR LF) as a ``Line``."""
    tags: dict[str, str] = {}
    rest = raw
    if rest.startswith("@"):
        text, _, rest = rest[1:].partition(" ")
        tags = dict(_tag(item) for item in text.split(";") if item)
    source = ""
    rest = rest.lstrip(" ")
    if rest.startswith(":"):
        source, _, rest = rest[1:].partition(" ")
    head, colon, trailing = rest.partition(" :")
    params = head.split()
    if colon:
        params.append(trailing)
    elif params and rest.startswith(":"):  # a bare trailing parameter
        params = [rest[1:]]
    command = params.pop(0).upper() if params else ""
    return Line(command, params, source, tags)


def _tag(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    return key, re.sub(r"\\(.)?", lambda m: TAG_ESCAPES.get(m[1] or "", m[1] or ""), value)


def line(command: str, *params: str) -> str:
    """A line to send, CR LF included; the last parameter may hold spaces."""
    for param in params:
        if any(c in param for c in "\r\n\0"):
            raise ProtocolError(f"{command}: a parameter holds a line break")
    *middle, last = params or ("",)
    for param in middle:
        if not param or " " in param or param.startswith(":"):
            raise ProtocolError(f"{command}: {param!r} cannot be a middle parameter")
    words = [command, *middle]
    if params:
        words.append(f":{last}" if not last or " " in last or last.startswith(":") else last)
    return " ".join(words) + "\r\n"


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8"))


def plain_text(text: str) -> str:
    """What the model wrote, for IRC: no Markdown markers, no formatting or control codes
    (a ``\\x01`` would make a CTCP request of it), tabs as spaces."""
    for pattern, replacement in MARKDOWN:
        text = pattern.sub(replacement, text)
    return FORMATTING.sub("", text.replace("\t", "    ").replace("\r\n", "\n"))


def received_text(text: str) -> str:
    """A received message without its formatting codes."""
    return FORMATTING.sub("", text).strip()


def message_budget(target: str, prefix: int = UNKNOWN_PREFIX) -> int:
    """Bytes of text one ``PRIVMSG target :text`` may carry once the server has put
    ``prefix`` bytes (``:nick!user@host ``) before it."""
    return MAX_LINE - prefix - utf8_length(f"PRIVMSG {target} :") - 2


def messages(text: str, budget: int) -> list[str]:
    """``text`` as IRC messages: each line its own (blank ones dropped), a long line cut at
    spaces, else between characters, to at most ``budget`` UTF-8 bytes each."""
    return [part for paragraph in plain_text(text).split("\n")
            for part in split_text(paragraph.rstrip(), budget, utf8_length)]


RFC1459_UPPER = str.maketrans("[]\\~", "{}|^")


def fold(name: str) -> str:
    """A nick or channel as the server compares them (``rfc1459`` case mapping)."""
    return name.lower().translate(RFC1459_UPPER)
