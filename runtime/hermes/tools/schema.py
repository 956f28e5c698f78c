"""Minimal JSON-schema checks of tool arguments, with messages a model can act on.

Covers what tool schemas here use: ``required``, basic ``type``s (also unions
like ``["string", "null"]``), ``enum``, ``items``, nested ``properties`` and
``additionalProperties: false``. Obvious scalar slips are coerced instead of
refused: ``"5"`` for an integer, ``"true"`` for a boolean.
"""

from __future__ import annotations

from typing import Any

from hermes.errors import ToolError, did_you_mean, one_of

TYPE_NAMES = {bool: "boolean", int: "integer", float: "number", str: "string",
              list: "array", dict: "object", type(None): "null"}


class SchemaError(ToolError):
    """Arguments that do not match the tool's JSON schema."""


def validate_arguments(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Return ``args`` (with scalar coercions applied) or raise ``SchemaError``."""
    value = _check(schema, args, "")
    if not isinstance(value, dict):
        raise SchemaError("the arguments must be a JSON object")
    return value


def _check(schema: dict[str, Any], value: Any, where: str) -> Any:
    value = _check_type(schema, value, where)
    if "enum" in schema and value not in schema["enum"]:
        choices = one_of(str(choice) for choice in schema["enum"])
        raise SchemaError(f"{_name(where)} must be one of: {choices}; got {value!r}")
    if isinstance(value, dict) and schema.get("type", "object") == "object":
        return _check_object(schema, value, where)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_check(schema["items"], item, f"{where}[{i}]") for i, item in enumerate(value)]
    return value


def _check_object(schema: dict[str, Any], value: dict[str, Any], where: str) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    missing = [key for key in schema.get("required", []) if key not in value]
    if missing:
        raise SchemaError(f"missing required argument{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(_name(_join(where, k)) for k in missing)}")
    checked = dict(value)
    for key, item in value.items():
        if key in properties:
            checked[key] = _check(properties[key], item, _join(where, key))
        elif schema.get("additionalProperties") is False:
            raise SchemaError(f"unknown argument {_name(_join(where, key))}"
                              f"{did_you_mean(key, properties)}; "
                              f"valid arguments: {one_of(properties)}")
    return checked


def _check_type(schema: dict[str, Any], value: Any, where: str) -> Any:
    expected = schema.get("type")
    if expected is None:
        return value
    allowed = [expected] if isinstance(expected, str) else list(expected)
    if any(_is_type(value, name) for name in allowed):
        return value
    for name in allowed:
        coerced = _coerce(value, name)
        if coerced is not None:
            return coerced
    got = TYPE_NAMES.get(type(value), type(value).__name__)
    raise SchemaError(f"{_name(where)} must be {' or '.join(allowed)}, got {got} {value!r:.60}")


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return TYPE_NAMES.get(type(value)) == name


def _coerce(value: Any, name: str) -> Any:
    """A scalar string the model meant as another type, or None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if name == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        if name == "integer":
            return int(text)
        if name == "number":
            return float(text)
    except ValueError:
        return None
    return None


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _name(where: str) -> str:
    return f'"{where}"' if where else "the arguments"
