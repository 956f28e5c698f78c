"""The Markdown models write, as one pattern the chat platforms' converters share
(Telegram's MarkdownV2, Signal's style ranges): fenced and inline code, links,
``**bold**``/``__bold__``, ``~~strike~~``, ``*italic*``/``_italic_`` and ``#`` headings.
Each match names its kind by group (``fence``/``code``/``lang``, ``inline``/``icode``,
``link``/``ltext``/``url``, ``bold``/``btext``/``b2text``, ``strike``/``stext``,
``italic``/``itext``/``utext``, ``heading``/``htext``)."""

from __future__ import annotations

import re
from collections.abc import Callable

MARKDOWN = re.compile(
    r"(?P<fence>```(?P<lang>[\w+#.-]*)\n?(?P<code>.*?)```)"
    r"|(?P<inline>`(?P<icode>[^`\n]+)`)"
    r"|(?P<link>\[(?P<ltext>[^\]\n]+)\]\((?P<url>[^)\s]+)\))"
    r"|(?P<bold>\*\*(?P<btext>[^\n]+?)\*\*|(?<!\w)__(?P<b2text>[^\n]+?)__(?!\w))"
    r"|(?P<strike>~~(?P<stext>[^\n]+?)~~)"
    r"|(?P<italic>(?<![\w*])\*(?P<itext>[^*\s][^*\n]*?)\*(?![\w*])"
    r"|(?<![\w_])_(?P<utext>[^_\s][^_\n]*?)_(?![\w_]))"
    r"|(?P<heading>^[ \t]*\#{1,6}[ \t]+(?P<htext>[^\n]+?)[ \t]*$)",
    re.DOTALL | re.MULTILINE)


def convert(text: str, escape: Callable[[str], str],
            entity: Callable[[re.Match[str]], str]) -> str:
    """``text`` with each ``MARKDOWN`` match made ``entity(match)`` and the plain text
    between them ``escape(...)``: a platform's converter is its two functions."""
    out: list[str] = []
    position = 0
    for match in MARKDOWN.finditer(text):
        out += (escape(text[position:match.start()]), entity(match))
        position = match.end()
    out.append(escape(text[position:]))
    return "".join(out)
