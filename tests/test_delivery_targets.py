"""Delivery targets: ``platform:chat_id[:thread]``, with Matrix room ids kept whole."""

from __future__ import annotations

import pytest

from hermes.chats import Target, TargetError, parse_target


@pytest.mark.parametrize(("text", "expected"), [
    ("telegram:123456789", Target("telegram", "123456789")),
    ("telegram:-1001234567890:42", Target("telegram", "-1001234567890", "42")),
    ("email:someone@example.org", Target("email", "someone@example.org")),
    ("matrix:!room:example.org", Target("matrix", "!room:example.org")),
    ("matrix:!room:localhost:8008", Target("matrix", "!room:localhost:8008")),
    ("matrix:!room:example.org:$root", Target("matrix", "!room:example.org", "$root")),
    ("matrix:#general:example.org", Target("matrix", "#general:example.org")),
])
def test_a_target_names_its_platform_chat_and_thread(text: str, expected: Target) -> None:
    assert parse_target(text) == expected
    assert parse_target(str(expected)) == expected


@pytest.mark.parametrize("text", ["telegram", "telegram:", ":123", "telegram:1 2", "a:b:c:d"])
def test_a_malformed_target_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(TargetError, match="e.g. telegram:"):
        parse_target(text)
