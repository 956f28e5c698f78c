"""Markdown as models write it, turned into Telegram's MarkdownV2.

MarkdownV2 reserves ``_*[]()~`>#+-=|{}.!`` (and ``\\``): each must be escaped outside
entities, or Telegram refuses the message. Code keeps its text (only ``\\`` and `````
are escaped there), links escape ``)`` and ``\\`` in the URL. What is understood:
fenced and inline code, links, ``**bold**``/``__bold__``, ``*italic*``/``_italic_``,
``~~strike~~`` and ``#`` headings (bold); everything else is literal text.
"""

from __future__ import annotations

import re

from hermes.gateway.messaging.markdown import convert

RESERVED = re.compile(r"([_*\[\]()~`>#+\-=|{}.!\\])")


def escape(text: str) -> str:
    """``text`` as literal MarkdownV2 text."""
    return RESERVED.sub(r"\\\1", text)


def to_markdown_v2(text: str) -> str:
    """``text`` (Markdown) as MarkdownV2 that Telegram accepts."""
    return convert(text, escape, _entity)


def _entity(match: re.Match[str]) -> str:
    if match["fence"] is not None:
        return f"```{match['lang']}\n{_code(match['code'])}```"
    if match["inline"] is not None:
        return f"`{_code(match['icode'])}`"
    if match["link"] is not None:
        url = match["url"].replace("\\", "\\\\").replace(")", "\\)")
        return f"[{escape(match['ltext'])}]({url})"
    if match["bold"] is not None:
        return f"*{escape(match['btext'] or match['b2text'])}*"
    if match["strike"] is not None:
        return f"~{escape(match['stext'])}~"
    if match["italic"] is not None:
        return f"_{escape(match['itext'] or match['utext'])}_"
    return f"*{escape(match['htext'])}*"


def _code(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`")
