"""Brace expansion, as bash does it before running a command: ``{rm,-rf,/}`` is
``rm -rf /``, ``f{,.bak}`` is ``f f.bak``, ``{1..3}`` is ``1 2 3``.

It works on a word's ``pattern`` (``shell_lexer.Word``), where every quoted or
expanded character is backslash-escaped, so ``'{a,b}'`` and ``${x:-a,b}`` stay
as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_BRACE_WORDS = 256


def expand_braces(pattern: str) -> list[str]:
    """Brace expansion of an escaped ``pattern`` (``Word.pattern``): ``a{b,c}d`` is
    ``abd acd``, ``{1..3}`` is ``1 2 3``; escaped braces and commas stay as they are."""
    words: list[str] = [pattern]
    done: list[str] = []
    while words and len(done) + len(words) <= MAX_BRACE_WORDS:
        word = words.pop(0)
        found = _first_brace(word)
        if found is None:
            done.append(word)
            continue
        start, end, choices = found
        words[:0] = [word[:start] + choice + word[end + 1:] for choice in choices]
    return (done + words)[:MAX_BRACE_WORDS]


def _first_brace(word: str) -> tuple[int, int, list[str]] | None:
    """``(start, end, alternatives)`` of the leftmost expandable ``{...}`` in ``word``."""
    for start in _bare_positions(word, "{"):
        depth = 0
        for end in _bare_positions(word, "{}", start):
            depth += 1 if word[end] == "{" else -1
            if depth == 0:
                choices = _brace_choices(word[start + 1:end])
                if choices is not None:
                    return start, end, choices
                break
    return None


def _bare_positions(word: str, chars: str, start: int = 0) -> Iterator[int]:
    """Positions of unescaped ``chars`` in ``word`` from ``start``."""
    index = start
    while index < len(word):
        if word[index] == "\\":
            index += 2
            continue
        if word[index] in chars:
            yield index
        index += 1


def _brace_choices(body: str) -> list[str] | None:
    """The alternatives of ``{body}``: a comma list or a sequence; None if neither."""
    parts, depth, last, index = [], 0, 0, 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            index += 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[last:index])
            last = index + 1
        index += 1
    if parts:
        return [*parts, body[last:]]
    return _sequence(body)


def _sequence(body: str) -> list[str] | None:
    """``1..5``, ``a..e``, ``10..1..3``: the values of a brace sequence, else None."""
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", body)
    if match is None:
        return None
    first, last, step_text = match.groups()
    numeric = [first[-1].isdigit(), last[-1].isdigit()]
    if numeric[0] != numeric[1]:
        return None
    start, stop = (int(first), int(last)) if numeric[0] else (ord(first), ord(last))
    step = abs(int(step_text or 1)) or 1
    values = range(start, stop + 1, step) if start <= stop else range(start, stop - 1, -step)
    return [str(v) if numeric[0] else chr(v) for v in values[:MAX_BRACE_WORDS]]


def unescape(pattern: str) -> str:
    """The text of an escaped pattern."""
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)
