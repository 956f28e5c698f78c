"""Command-line values for ``hermes config set``, read the way the schema expects them.

A value is YAML (``3`` is an int, ``[a, b]`` a list); for keys whose schema
type is a list of names, ``a,b`` and a single ``a`` are lists too.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from hermes.config.schema import HermesConfig


def parse_value(text: str) -> Any:
    """Interpret a command-line value as YAML: ``3`` is an int, ``[a, b]`` a list."""
    import yaml

    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


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
