"""Snippets for search hits: the text around the first match, every match marked.

Built in Python from the chosen messages rather than with FTS5's ``snippet()``: that
function needs the MATCH evaluated again, and for a prefix query (``deplo*``) rebuilding
its doclist costs more than the whole ranked search.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from hermes.sessions.models import MATCH_CLOSE, MATCH_OPEN

WIDTH = 60
"""Characters of context either side of the first match."""
_WORD = re.compile(r"[^\W_]+")  # as unicode61 splits: letters and digits; "_" separates
Span = tuple[int, int]


def fold(word: str) -> str:
    """Case and diacritics folded, as the index's ``remove_diacritics 2`` does."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def word_snippet(texts: Sequence[str | None], terms: Iterable[tuple[str, bool]]) -> str:
    """Mark whole words (and phrases) the way the word index matched them.

    ``terms`` are (text, prefix) pairs; a prefix term matches words starting with it.
    """
    patterns = [([fold(w) for w in _WORD.findall(text)], prefix) for text, prefix in terms]
    patterns = [(words, prefix) for words, prefix in patterns if words]
    for text in texts:
        spans = _word_spans(text or "", patterns)
        if spans:
            return _window(text or "", spans)
    return _plain(texts)


def _word_spans(text: str, patterns: list[tuple[list[str], bool]]) -> list[Span]:
    tokens = [(m.start(), m.end(), fold(m.group())) for m in _WORD.finditer(text)]
    spans = []
    for i in range(len(tokens)):
        for words, prefix in patterns:
            last = i + len(words) - 1
            if last >= len(tokens):
                continue
            head = all(tokens[i + k][2] == w for k, w in enumerate(words[:-1]))
            tail = tokens[last][2]
            if head and (tail.startswith(words[-1]) if prefix else tail == words[-1]):
                spans.append((tokens[i][0], tokens[last][1]))
                break
    return spans


def substring_snippet(texts: Sequence[str | None], terms: Iterable[str]) -> str:
    """Mark case-insensitive substrings, as the trigram index and LIKE matched them."""
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)),
                         re.IGNORECASE)
    for text in texts:
        spans = [m.span() for m in pattern.finditer(text or "")]
        if spans:
            return _window(text or "", spans)
    return _plain(texts)


def _window(text: str, spans: list[Span]) -> str:
    start = max(0, spans[0][0] - WIDTH)
    end = min(len(text), spans[0][1] + WIDTH)
    parts, cursor = ["…" if start else ""], start
    for left, right in spans:
        if left < cursor or right > end:
            continue  # overlaps an earlier mark, or runs past the window
        parts += [text[cursor:left], MATCH_OPEN, text[left:right], MATCH_CLOSE]
        cursor = right
    parts += [text[cursor:end], "…" if end < len(text) else ""]
    return "".join(parts)


def marked_parts(snippet: str) -> list[tuple[str, bool]]:
    """A snippet as ``(text, is_match)`` parts, the markers removed: a front end escapes
    each part for its medium (terminal markup, HTML) and then marks the matches."""
    parts = snippet.replace(MATCH_CLOSE, MATCH_OPEN).split(MATCH_OPEN)
    return [(part, i % 2 == 1) for i, part in enumerate(parts) if part]


def _plain(texts: Sequence[str | None]) -> str:
    text = next((t for t in texts if t), "")
    return text[: 2 * WIDTH] + ("…" if len(text) > 2 * WIDTH else "")
