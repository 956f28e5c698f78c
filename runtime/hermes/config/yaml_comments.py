"""Keep comments in place when round-trip YAML entries are added, replaced or removed.

ruamel.yaml stores the comment lines that follow an entry on that entry's
last line (the deepest last value), together with the end-of-line comment of
that line. Removing the entry would drop them, and appending after it would
put the new entry below comments that introduce the *next* key. The helpers
here split such a comment into the end-of-line part, which stays with its
line, and the "tail" of full comment and blank lines, which moves so that it
keeps its place among the remaining lines.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

Container = CommentedMap | CommentedSeq


def _slot(container: Container, key: Any) -> tuple[list[Any], int]:
    """Where the comment after ``container[key]``'s own line lives."""
    if isinstance(container, CommentedSeq):
        return container.ca.items.setdefault(key, [None, None, None, None]), 0
    return container.ca.items.setdefault(key, [None, None, None, None]), 2


def _last_key(container: Container) -> Any:
    return len(container) - 1 if isinstance(container, CommentedSeq) else list(container)[-1]


def end_slot(container: Container, key: Any) -> tuple[list[Any], int]:
    """The comment slot of the last line of entry ``key`` (its deepest last value)."""
    value = container[key]
    if isinstance(value, CommentedMap | CommentedSeq) and len(value):
        return end_slot(value, _last_key(value))
    return _slot(container, key)


def take_tail(slot: tuple[list[Any], int]) -> str:
    """Remove and return the comment lines after the slot's line; keep its EOL comment."""
    holder, index = slot
    token = holder[index]
    if not isinstance(token, CommentToken):
        return ""
    eol, newline, tail = token.value.partition("\n")
    if eol.strip():
        token.value = eol + newline
    else:
        holder[index] = None
    return tail


def add_tail(slot: tuple[list[Any], int], tail: str) -> None:
    """Put comment lines ``tail`` after the slot's line (after any already there)."""
    if not tail:
        return
    holder, index = slot
    token = holder[index]
    if isinstance(token, CommentToken):
        token.value = token.value + tail
    else:
        holder[index] = CommentToken("\n" + tail, CommentMark(0))


def add_header(doc: CommentedMap, text: str) -> None:
    """Append comment lines to the top of the document (before its first key)."""
    if not text:
        return
    if doc.ca.comment is None:
        doc.ca.comment = [None, []]
    if doc.ca.comment[1] is None:
        doc.ca.comment[1] = []
    doc.ca.comment[1].append(CommentToken(text, CommentMark(0)))


def header_text(doc: CommentedMap) -> str:
    """The comment lines at the top of the document."""
    tokens = doc.ca.comment[1] if doc.ca.comment else None
    return "".join(token.value for token in tokens or [])


def _add_before_first(container: Container, tail: str) -> None:
    """Put comment lines ``tail`` before the first entry of a nested container."""
    comment = container.ca.comment
    if comment and isinstance(comment[0], CommentToken):  # after the key line's own comment
        comment[0].value = comment[0].value + tail
    elif comment and comment[1]:
        comment[1].append(CommentToken(tail, CommentMark(0)))
    else:
        container.ca.comment = [CommentToken("\n" + tail, CommentMark(0)), None]


def _leading(value: Any) -> str:
    """Comment lines between a container's key line and its first entry (at any depth)."""
    if not isinstance(value, CommentedMap | CommentedSeq) or not len(value):
        return ""
    text = ""
    if value.ca.comment:
        eol_and_lines, lines = value.ca.comment[0], value.ca.comment[1]
        if isinstance(eol_and_lines, CommentToken):  # the key line's own comment stays out
            text += eol_and_lines.value.partition("\n")[2]
        text += "".join(token.value for token in lines or [])
    return text + _leading(value[0 if isinstance(value, CommentedSeq) else list(value)[0]])


def remove_entry(container: Container, key: Any, *, top: bool = False) -> str:
    """Delete ``container[key]``, keeping the comment lines that followed it and those
    before the first entry inside it.

    They go after the previous entry, else before the next one (or, for the
    document, ``top``, to its header). Returns them instead when the container
    is left empty, for the caller to place when it removes the container too.
    """
    tail = _leading(container[key]) + take_tail(end_slot(container, key))
    keys = list(range(len(container))) if isinstance(container, CommentedSeq) else list(container)
    position = keys.index(key)
    del container[key]
    if position > 0:
        add_tail(end_slot(container, keys[position - 1]), tail)
    elif top and isinstance(container, CommentedMap):
        add_header(container, tail)
    elif len(container) and tail:
        _add_before_first(container, tail)
    else:
        return tail
    return ""


def set_entry(container: Container, key: Any, value: Any) -> None:
    """Set ``container[key]`` (appending when new) with comments kept in their places.

    Comment lines after the old last line (of the replaced entry, or of the
    container when appending) stay after the new one.
    """
    value = to_roundtrip(value)
    if isinstance(container, CommentedSeq) and key == len(container):
        anchor = len(container) - 1 if len(container) else None
    elif key in container:
        anchor = key
    else:
        anchor = _last_key(container) if len(container) else None
    tail = take_tail(end_slot(container, anchor)) if anchor is not None else ""
    if isinstance(container, CommentedSeq) and key == len(container):
        container.append(value)
    else:
        container[key] = value
    add_tail(end_slot(container, key), tail)


def to_roundtrip(value: Any) -> Any:
    """Plain dicts and lists as ruamel containers, so comments can attach to them."""
    if isinstance(value, dict) and not isinstance(value, CommentedMap):
        result = CommentedMap()
        for k, v in value.items():
            result[k] = to_roundtrip(v)
        return result
    if isinstance(value, list) and not isinstance(value, CommentedSeq):
        return CommentedSeq(to_roundtrip(v) for v in value)
    return value
