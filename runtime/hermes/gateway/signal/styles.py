"""Markdown as models write it, turned into Signal's text and its style ranges.

Signal shows no Markdown: a message is plain text plus ranges (``start:length:STYLE``,
counted in UTF-16 units as Signal apps count) that are shown bold, italic, struck
through or monospaced. What is understood: fenced and inline code (monospace),
``**bold**``/``__bold__``, ``*italic*``/``_italic_``, ``~~strike~~`` and ``#`` headings
(bold), their markers taken out; a link is written ``text (address)``. Everything else
stays as written (lists, quotes).
"""

from __future__ import annotations

import re

from hermes.gateway.messaging.markdown import MARKDOWN
from hermes.gateway.messaging.text import utf16_length


def to_signal(text: str) -> tuple[str, list[str]]:
    """``text`` (Markdown) as Signal's plain text and its ``start:length:STYLE`` ranges."""
    out: list[str] = []
    styles: list[str] = []
    position = offset = 0
    for match in MARKDOWN.finditer(text):
        before = text[position:match.start()]
        inner, style = _entity(match)
        out += [before, inner]
        offset += utf16_length(before)
        if inner and style:
            styles.append(f"{offset}:{utf16_length(inner)}:{style}")
        offset += utf16_length(inner)
        position = match.end()
    out.append(text[position:])
    return "".join(out), styles


def _entity(match: re.Match[str]) -> tuple[str, str | None]:
    if match["fence"] is not None:
        return match["code"].rstrip("\n"), "MONOSPACE"
    if match["inline"] is not None:
        return match["icode"], "MONOSPACE"
    if match["link"] is not None:  # no style: the address written out
        return f"{match['ltext']} ({match['url']})", None
    if match["bold"] is not None:
        return match["btext"] or match["b2text"], "BOLD"
    if match["strike"] is not None:
        return match["stext"], "STRIKETHROUGH"
    if match["italic"] is not None:
        return match["itext"] or match["utext"], "ITALIC"
    return match["htext"], "BOLD"
