"""Edits of the built-in memory entries, as pure functions over lists of entries.

An ``Operation`` adds, replaces or removes one entry of one target (``memory``
= MEMORY.md, ``user`` = USER.md). ``apply_operations`` applies a batch to
copies and either returns the new entries of every target or raises
``MemoryEditError`` (then nothing may be written): the batch is all-or-nothing.
Replace and remove find their entry by ``old_text``: an entry equal to it
wins, else the one entry containing it; none or several is an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from hermes.errors import ToolError
from hermes.memory.scan import scan_text

Target = Literal["memory", "user"]
Action = Literal["add", "replace", "remove"]

ENTRY_DELIMITER = "\n§\n"
"""Separates entries in MEMORY.md and USER.md; an entry may span lines."""
FILES: Mapping[Target, str] = MappingProxyType({"memory": "MEMORY.md", "user": "USER.md"})
"""The file of each target, inside the home's ``memories/``."""


class MemoryEditError(ToolError):
    """An edit that cannot be made; ``target`` names the file whose entries to list."""

    def __init__(self, message: str, target: Target | None = None):
        super().__init__(message)
        self.target = target


@dataclass(frozen=True)
class Operation:
    """One edit requested by the model."""

    action: Action
    target: Target
    content: str = ""
    """The new entry (add, replace)."""
    old_text: str = ""
    """A unique part of the entry to change (replace, remove)."""


@dataclass(frozen=True)
class EditOutcome:
    """The entries of every target after a batch, and what each operation did."""

    entries: dict[Target, list[str]]
    notes: list[str]
    changed: frozenset[Target]


def refusal_line(exc: MemoryEditError) -> str:
    """The one line the ``memory`` tool (and the dashboard) answers a refused edit with."""
    return f"{str(exc).rstrip('.')}. Nothing was changed."


def char_count(entries: Sequence[str]) -> int:
    """Characters the entries take in their file (delimiters included)."""
    return len(ENTRY_DELIMITER.join(entries))


def apply_operations(current: Mapping[Target, list[str]], operations: Sequence[Operation],
                     limits: Mapping[Target, int]) -> EditOutcome:
    """Apply ``operations`` in order to copies of ``current``; raise on the first refusal."""
    entries: dict[Target, list[str]] = {target: list(items) for target, items in current.items()}
    notes = []
    for number, op in enumerate(operations, start=1):
        try:
            notes.append(_apply_one(entries[op.target], op))
        except MemoryEditError as exc:
            if len(operations) == 1:
                raise
            raise MemoryEditError(f"operation {number} ({op.action} on {op.target}): {exc}",
                                  exc.target) from exc
    changed = frozenset(t for t in entries if entries[t] != current[t])
    for target in sorted(changed):
        _check_limit(target, current[target], entries[target], limits[target])
    return EditOutcome(entries, notes, changed)


def _apply_one(entries: list[str], op: Operation) -> str:
    if op.action == "add":
        content = _clean(op.content, op.target)
        if content in entries:
            return f"{op.target}: already present, nothing added"
        entries.append(content)
        return f"{op.target}: added"
    index = find_entry(entries, op.old_text, op.target)
    if op.action == "remove":
        del entries[index]
        return f"{op.target}: removed"
    content = _clean(op.content, op.target)
    if content == entries[index]:
        return f"{op.target}: unchanged (same text)"
    if content in entries:  # replacing with a duplicate of another entry merges the two
        del entries[index]
        return f"{op.target}: replaced (merged with an identical entry)"
    entries[index] = content
    return f"{op.target}: replaced"


def find_entry(entries: Sequence[str], old_text: str, target: Target) -> int:
    """The index of the entry ``old_text`` designates: exact match first, else substring."""
    needle = old_text.strip()
    name = FILES[target]
    if not needle:
        raise MemoryEditError("old_text is required to replace or remove an entry", target)
    if needle in entries:
        return entries.index(needle)
    hits = [i for i, entry in enumerate(entries) if needle in entry]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise MemoryEditError(f'no {name} entry contains "{needle}"', target)
    raise MemoryEditError(f'"{needle}" is in {len(hits)} {name} entries; quote more of the '
                          "one you mean", target)


def _clean(content: str, target: Target) -> str:
    """``content`` stripped, or an error if it is empty, would split, or is a threat."""
    text = content.strip()
    if not text:
        raise MemoryEditError("content is required (the text of the entry)", target)
    if any(line.strip() == "§" for line in text.splitlines()):
        raise MemoryEditError('an entry cannot contain a line with only "§" (the delimiter)',
                              target)
    reason = scan_text(text)
    if reason:
        raise MemoryEditError(f"blocked: {reason}. Memory must not hold instructions, "
                              "commands that leak data or hidden characters")
    return text


def _check_limit(target: Target, before: Sequence[str], after: Sequence[str],
                 limit: int) -> None:
    """Refuse growth past the limit (shrinking an over-full file is always allowed)."""
    size = char_count(after)
    if size > limit and size > char_count(before):
        raise MemoryEditError(
            f"{FILES[target]} would hold {size:,} characters, over its limit of {limit:,} "
            f"(now {char_count(before):,}); replace or remove entries first, e.g. merge "
            "related ones", target)
