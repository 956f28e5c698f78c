"""Markdown as models write it, turned into Slack's mrkdwn.

Slack reads ``&``, ``<`` and ``>`` as control characters (``<@U123>``, ``<url|text>``):
each is escaped everywhere (``&amp;``, ``&lt;``, ``&gt;``), code included, so a model's
``a < b`` or ``<!channel>`` stays text. What is understood: fenced and inline code,
links (``<url|text>``), ``**bold**``/``__bold__`` (``*bold*``), ``*italic*``/``_italic_``
(``_italic_``), ``~~strike~~`` (``~strike~``) and ``#`` headings (bold); everything else
is literal text.
"""

from __future__ import annotations

import re

from hermes.gateway.messaging.markdown import convert

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_SPECIAL = re.compile("[&<>]")


def escape(text: str) -> str:
    """``text`` as literal Slack text: ``&``, ``<``, ``>`` escaped."""
    return _SPECIAL.sub(lambda m: _ESCAPES[m[0]], text)


def escaped_length(text: str) -> int:
    """The length of ``escape(text)`` (additive, so answers can be split by it)."""
    return len(text) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))


def to_mrkdwn(text: str) -> str:
    """``text`` (Markdown) as mrkdwn; never longer than ``escaped_length(text)``."""
    return convert(text, escape, _entity)


def _entity(match: re.Match[str]) -> str:
    if match["fence"] is not None:
        return f"```{escape(match['code'])}```"
    if match["inline"] is not None:
        return f"`{escape(match['icode'])}`"
    if match["link"] is not None:
        url = escape(match["url"]).replace("|", "%7C")
        return f"<{url}|{escape(match['ltext'])}>"
    if match["bold"] is not None:
        return f"*{escape(match['btext'] or match['b2text'])}*"
    if match["strike"] is not None:
        return f"~{escape(match['stext'])}~"
    if match["italic"] is not None:
        return f"_{escape(match['itext'] or match['utext'])}_"
    return f"*{escape(match['htext'])}*"
