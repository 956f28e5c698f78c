"""Fence outside text (an MCP server's results and errors, recalled memories) so that the
model can tell it from instructions: ``<tag attr="...">`` ... ``</tag>``, with anything
inside that reads as the tag defused.

A model reads tags loosely: ``< /mcp-result>``, ``</MCP-RESULT >``, ``</mcp-result`` and a
newline, fullwidth ``＜／ｍｃｐ－ｒｅｓｕｌｔ＞``, a zero-width space inside, Cyrillic
``с`` for ``c``. So the check is made on a skeleton of the text (compatibility-folded,
case-folded, accents and everything but letters and digits dropped, common look-alike
letters mapped to Latin): every ``<``-like character whose skeleton continues with the
tag's letters becomes ``&lt;``, whatever comes between. Opening tags are defused too, so
no fence can be nested or restarted inside another.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import pairwise

LESS_THAN = "<\u2039\u02c2\u1438\u2329\u27e8\u276e\u276c\u29fc\u3008\ufe64\uff1c"
"""``<``, its compatibility forms (``﹤``, ``＜``: all that fold to ``<``) and characters
drawn like it."""
SKIPPED = re.compile("[^A-Za-z0-9\x80-\U0010ffff]+"
                     "|[\\s\u0300-\u036f\u200b-\u200f\u2060-\u2064\ufeff]+")
"""Runs the skeleton drops for certain (ASCII punctuation, spaces, invisible characters),
skipped at once rather than a character at a time."""
LOOK_ALIKES = str.maketrans({
    # Cyrillic and Greek letters drawn like the Latin ones of fence names
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k",
    "ӏ": "l", "м": "m", "п": "n", "о": "o", "р": "p", "ԛ": "q", "г": "r", "ѕ": "s",
    "т": "t", "ц": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "α": "a", "ε": "e",
    "ι": "l", "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y", "ϲ": "c", "ѡ": "w", "ɩ": "l", "ʟ": "l", "ᴍ": "m", "ᴘ": "p",
    "ʀ": "r", "ᴇ": "e", "ꜱ": "s", "ᴜ": "u", "ᴛ": "t", "ᴄ": "c",
})


def fence(tag: str, attributes: dict[str, str], text: str, *,
          urls: tuple[str, ...] = ()) -> str:
    """``text`` inside ``<tag ...>`` and ``</tag>``; attribute values keep to word
    characters, dots and dashes (they may come from outside too); those named in ``urls``
    also keep a URL's punctuation."""
    shown = "".join(f' {name}="{url_label(value) if name in urls else label(value)}"'
                    for name, value in attributes.items())
    return f"<{tag}{shown}>\n{defuse(text, tag)}\n</{tag}>"


def label(value: str) -> str:
    """``value`` in word characters, dots and dashes: safe inside a tag."""
    return re.sub(r"[^\w.-]", "_", value)


def url_label(value: str) -> str:
    """``value`` (a URL) in word characters and a URL's punctuation: still no quote,
    angle bracket or space, so it stays one attribute value."""
    return re.sub(r"[^\w.\-:/?=&%~+#@,*]", "_", value)


def defuse(text: str, tag: str) -> str:
    """``text`` with every ``<``-like character that starts something reading as
    ``<tag`` or ``</tag`` (in any spelling a model may take for it) made ``&lt;``."""
    letters = _skeleton(tag)
    bounds = [m.start() for m in _opener(letters[0]).finditer(text)] + [len(text)]
    # a look stops where the next one starts
    hits = [i for i, end in pairwise(bounds) if _spells(text, i + 1, end, letters)]
    pieces, kept = [], 0
    for index in hits:
        pieces += [text[kept:index], "&lt;"]
        kept = index + 1
    return "".join([*pieces, text[kept:]])


def _spells(text: str, start: int, end: int, letters: str) -> bool:
    """Whether the skeleton of ``text[start:end]`` begins with ``letters``."""
    seen, at = "", start
    while at < end and letters.startswith(seen) and len(seen) < len(letters):
        skipped = SKIPPED.match(text, at, end)
        if skipped is not None:
            at = skipped.end()
        else:
            seen, at = seen + _skeleton(text[at]), at + 1
    return seen.startswith(letters)


@lru_cache(maxsize=16)
def _opener(first: str) -> re.Pattern[str]:
    """A ``<``-like character, unless an ASCII letter or digit other than ``first``
    follows it or its ``/`` (most of HTML's, ruled out without a closer look)."""
    return re.compile(f"[{LESS_THAN}](?!/?[A-Za-z0-9](?<![{first}{first.upper()}]))")


@lru_cache(maxsize=4096)
def _skeleton(text: str) -> str:
    """Letters and digits of ``text``, folded: ``"</ＭСР-result>"`` -> ``"mcpresult"``."""
    folded = unicodedata.normalize("NFKD", text).casefold().translate(LOOK_ALIKES)
    return "".join(c for c in folded if c.isalnum())
