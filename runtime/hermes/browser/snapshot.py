"""Snapshots as the model reads them: the page's tree in the shape of Playwright's ``ai``
form (interactive elements carry ``[ref=eN]``; made by ``snapshot_js.SNAPSHOT``), cut
into pages at line ends."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

REF = re.compile(r"\[ref=([A-Za-z0-9]+)\]")


@dataclass
class Snapshot:
    """The last snapshot of a page: its text and the refs in it."""

    url: str
    text: str
    refs: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, url: str, text: str) -> Snapshot:
        return cls(url, text, frozenset(REF.findall(text)))


def split_pages(text: str, max_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``max_chars``, at line ends where it can."""
    pages: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        while len(line) > max_chars:  # one enormous line: cut it
            if current:
                pages.append("".join(current))
                current, size = [], 0
            pages.append(line[:max_chars])
            line = line[max_chars:]
        if size + len(line) > max_chars and current:
            pages.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line)
    if current or not pages:
        pages.append("".join(current))
    return pages
