"""Round-trip YAML for edits: load a config file and dump it with comments kept.

A file of comments only (what ``hermes profile create`` writes) loads as an
empty mapping whose header holds those comments, so keys set later go below
them and removing every key gives the comments back.
"""

from __future__ import annotations

import io
from typing import Any

from hermes.config.duplicates import find_duplicate
from hermes.errors import ConfigError


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_roundtrip(text: str, source: str | None = None) -> Any:
    """Load YAML for editing; errors name ``source`` (the file) and the line."""
    from ruamel.yaml import CommentedMap
    from ruamel.yaml.constructor import DuplicateKeyError
    from ruamel.yaml.error import YAMLError

    try:
        doc = _yaml().load(text)
    except DuplicateKeyError as exc:
        duplicate = find_duplicate(text)
        if duplicate is not None:
            raise duplicate.error(source or "config") from exc
        raise _yaml_error(exc, source) from exc
    except YAMLError as exc:
        raise _yaml_error(exc, source) from exc
    if doc is None:
        doc = CommentedMap()
        _keep_comments_only_text(doc, text)
        return doc
    if not isinstance(doc, dict):
        raise ConfigError("expected a mapping of settings at the top level", source=source)
    return doc


def _yaml_error(exc: Exception, source: str | None) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    where = source
    if mark is not None:
        where = f"{source}:{mark.line + 1}" if source else f"line {mark.line + 1}"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ConfigError(f"invalid YAML: {problem}", source=where)


def _keep_comments_only_text(doc: Any, text: str) -> None:
    """Make the comments of a file without settings the header of ``doc``."""
    from hermes.config.yaml_comments import add_header

    lines = text.splitlines()
    if not any(line.lstrip().startswith("#") for line in lines):
        return
    header = "\n".join(lines).rstrip("\n") + "\n"
    add_header(doc, header + "\n")  # a blank line between the comments and new keys


def dump_roundtrip(doc: Any) -> str:
    """The YAML text of ``doc``; an empty one is its header comments alone."""
    from hermes.config.yaml_comments import header_text

    if not doc:
        header = header_text(doc) if hasattr(doc, "ca") else ""
        return header.rstrip("\n") + "\n" if header.strip() else ""
    buffer = io.StringIO()
    _yaml().dump(doc, buffer)
    return buffer.getvalue()
