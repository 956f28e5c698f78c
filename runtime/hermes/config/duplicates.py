"""Duplicate keys in a YAML mapping are errors, not a silent "last one wins".

PyYAML keeps the last of two ``agent:`` blocks and drops the first without a
word; ruamel.yaml refuses the file with a long message. Every config file is
read through ``StrictLoader``, and round-trip loads translate ruamel's error
through ``find_duplicate``, so composing, validating and editing all report
the same one-line error naming the file, the line and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from hermes.errors import ConfigError

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Duplicate:
    """A key named twice in one mapping."""

    key: str
    """Dotted path of the repeated key, e.g. ``agent`` or ``agent.max_iterations``."""
    line: int
    """Line of the second occurrence (1-based)."""
    first: int
    """Line of the first occurrence."""
    block: bool
    """Whether the second occurrence holds a mapping (a block of settings)."""

    def error(self, source: str) -> ConfigError:
        name = self.key.rsplit(".", 1)[-1]
        fix = (f"merge the two `{name}:` blocks into one" if self.block
               else f"keep one of the two `{name}:` lines")
        return ConfigError(f"duplicate key (first on line {self.first}) — {fix}",
                           source=f"{source}:{self.line}", key=self.key)


class DuplicateKeyFound(Exception):
    """Raised by ``StrictLoader``; the reader turns it into a ``ConfigError``."""

    def __init__(self, duplicate: Duplicate):
        super().__init__(duplicate.key)
        self.duplicate = duplicate


class StrictLoader(_Base):  # type: ignore[misc]
    """The safe loader, refusing a mapping that names one key twice."""

    def construct_document(self, node: Node) -> Any:
        duplicate = check_duplicates(node)
        if duplicate is not None:
            raise DuplicateKeyFound(duplicate)
        return super().construct_document(node)


def check_duplicates(node: Node, path: tuple[str, ...] = (),
                     above: frozenset[int] = frozenset()) -> Duplicate | None:
    """The first key that repeats within one mapping, anywhere below ``node``."""
    if id(node) in above:  # a recursive alias: already being checked
        return None
    children: list[tuple[str, Node]] = []
    if isinstance(node, SequenceNode):
        children = [(str(index), item) for index, item in enumerate(node.value)]
    elif isinstance(node, MappingNode):
        seen: dict[tuple[str, str], int] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != _MERGE:
                ident, line = (key_node.tag, key_node.value), key_node.start_mark.line + 1
                if ident in seen:
                    return Duplicate(".".join((*path, key_node.value)), line, seen[ident],
                                     isinstance(value_node, MappingNode))
                seen[ident] = line
            children.append((str(key_node.value), value_node))
    for name, child in children:
        found = check_duplicates(child, (*path, name), above | {id(node)})
        if found is not None:
            return found
    return None


def find_duplicate(text: str) -> Duplicate | None:
    """The first repeated key in ``text``, if it parses as YAML."""
    try:
        node = yaml.compose(text, Loader=_Base)
    except yaml.YAMLError:
        return None
    return check_duplicates(node) if node is not None else None
