"""Repairing tool-call argument strings, and validating them against a schema."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes.tools.arguments import ArgumentError, parse_arguments
from hermes.tools.schema import SchemaError, validate_arguments


@pytest.mark.parametrize(("raw", "expected"), [
    (None, {}),
    ("", {}),
    ("   \n", {}),
    ('{"a": 1}', {"a": 1}),
    ({"a": 1}, {"a": 1}),
    ('{"a": 1,}', {"a": 1}),
    ('{"a": [1, 2,],}', {"a": [1, 2]}),
    ('{"a": [1, 2', {"a": [1, 2]}),
    ('{"a": {"b": "c"', {"a": {"b": "c"}}),
    ('{"a": [1, 2}', {"a": [1, 2]}),
    ('{"a": "unterminated', {"a": "unterminated"}),
    ('{"cmd": "line1\nline2\tend"}', {"cmd": "line1\nline2\tend"}),
    ('```json\n{"path": "x"}\n```', {"path": "x"}),
    ('```\n{"path": "x",}\n```', {"path": "x"}),
    ('{"text": "a, }"}', {"text": "a, }"}),
    ('{"a": "x\\"y",\n}', {"a": 'x"y'}),
])
def test_repairs(raw: object, expected: dict[str, object]) -> None:
    assert parse_arguments(raw) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("raw", "message"), [
    ("[1, 2]", "must be a JSON object, got an array"),
    ('"text"', "got a string"),
    ("not json at all", "could not parse the arguments as JSON"),
    ('{"a": }', "Expecting value"),
    ("[" * 50_000, "could not parse"),
    (42, "must be a JSON string"),
])
def test_rejections_are_clear(raw: object, message: str) -> None:
    with pytest.raises(ArgumentError, match=message) as info:
        parse_arguments(raw)  # type: ignore[arg-type]
    assert "JSON object" in str(info.value)


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(alphabet=st.sampled_from('{}[]",:\\ \n\tab1-etrunl`') | st.characters()))
def test_arbitrary_text_never_raises_anything_else(text: str) -> None:
    try:
        result = parse_arguments(text)
    except ArgumentError:
        return
    assert isinstance(result, dict)


SCHEMA = {
    "type": "object", "required": ["path"], "additionalProperties": False,
    "properties": {
        "path": {"type": "string"}, "limit": {"type": "integer"}, "force": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["a", "b"]}, "ratio": {"type": "number"},
        "items": {"type": "array", "items": {"type": "object", "required": ["id"],
                                             "properties": {"id": {"type": "string"}}}},
    },
}


def test_schema_accepts_and_coerces_obvious_slips() -> None:
    checked = validate_arguments(SCHEMA, {"path": "x", "limit": "5", "force": "true",
                                          "ratio": 2})
    assert checked == {"path": "x", "limit": 5, "force": True, "ratio": 2}


@pytest.mark.parametrize(("args", "message"), [
    ({}, 'missing required argument "path"'),
    ({"path": 3}, '"path" must be string, got integer'),
    ({"path": "x", "limit": "many"}, '"limit" must be integer, got string'),
    ({"path": "x", "limit": True}, '"limit" must be integer, got boolean'),
    ({"path": "x", "mode": "c"}, '"mode" must be one of: a, b'),
    ({"path": "x", "pth": 1}, 'unknown argument "pth"'),
    ({"path": "x", "items": [{"id": "1"}, {}]}, 'missing required argument "items\\[1\\].id"'),
    ({"path": "x", "items": "nope"}, '"items" must be array'),
])
def test_schema_errors_name_the_argument(args: dict[str, object], message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        validate_arguments(SCHEMA, args)
