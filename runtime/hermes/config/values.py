"""Command-line values for ``hermes config set``, read the way the schema expects them.

A value is YAML (``3`` is an int, ``[a, b]`` a list); for keys whose schema
type is a list of names, ``a,b`` and a single ``a`` are lists too. A ``#`` that YAML
would read as a comment is part of the text: ``#ops`` (an IRC channel) is the string
``#ops``, not a comment that leaves null, and ``be terse # always`` keeps its tail.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from hermes.config.schema import HermesConfig


def parse_value(text: str) -> Any:
    """Interpret a command-line value as YAML: ``3`` is an int, ``[a, b]`` a list; text
    holding what YAML would take for a comment is that text, whole."""
    import yaml

    try:
        return text if not text.strip() or _has_comment(text) else yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _has_comment(text: str) -> bool:
    """Whether YAML would drop part of ``text`` as a comment: something other than
    blanks after its last token (a ``#`` inside quotes or a word is part of a token)."""
    import yaml

    end = 0
    for token in yaml.scan(text):
        if not isinstance(token, yaml.StreamEndToken):
            end = max(end, token.end_mark.index)
    return bool(text[end:].strip())


def parse_for_key(key: str, text: str) -> Any:
    """``text`` as the value of ``key``: YAML, with comma lists for list-of-names keys."""
    value = parse_value(text)
    if isinstance(value, str) and is_list_of_names(schema_type(key)):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def schema_type(key: str) -> Any:
    """The schema's type annotation for a dotted key; ``None`` if the schema has none."""
    annotation: Any = HermesConfig
    for part in key.split("."):
        fields = getattr(_without_none(annotation), "model_fields", None)
        if not isinstance(fields, dict) or part not in fields:
            return None
        annotation = fields[part].annotation
    return annotation


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def is_list_of_names(annotation: Any) -> bool:
    """True for ``list[str]`` and lists of ``Literal`` choices."""
    annotation = _without_none(annotation)
    if get_origin(annotation) is not list:
        return False
    (item,) = get_args(annotation) or (None,)
    if get_origin(item) is Annotated:  # a checked name (``plugin:NAME`` choices)
        item = get_args(item)[0]
    return item is str or get_origin(item) is Literal
