"""Splitting long answers and escaping MarkdownV2, for any text (hypothesis), checked
with the fake Bot API's MarkdownV2 parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakebot import check_markdown_v2
from hermes.gateway.messaging.text import split_text, utf16_length
from hermes.gateway.telegram.markdown import escape, to_markdown_v2

MARKDOWNISH = st.lists(st.sampled_from(
    list("ab _*[]()~`>#+-=|{}.!\\\n") + ["**", "__", "```", "```py\n", "[x](http://y)", "😀"]),
    max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(MARKDOWNISH, max_size=6).map("".join))
def test_any_text_becomes_markdown_v2_telegram_accepts(text: str) -> None:
    error, _ = check_markdown_v2(to_markdown_v2(text))
    assert error is None, (text, to_markdown_v2(text), error)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_escaped_text_reads_back_as_itself(text: str) -> None:
    error, plain = check_markdown_v2(escape(text))
    assert error is None and plain == text


@pytest.mark.parametrize(("markdown", "expected"), [
    ("1.5 + 2 = 3.5!", r"1\.5 \+ 2 \= 3\.5\!"),
    ("**bold** and _it_", r"*bold* and _it_"),
    ("`a_b*c` ok", r"`a_b*c` ok"),
    ("see [the docs](http://x.org/a_(b))", r"see [the docs](http://x.org/a_(b)\)"),
    ("# Title\ntext", "*Title*\ntext"),
    ("```py\nx = `y`\n```", "```py\nx = \\`y\\`\n```"),
    ("snake_case_name", r"snake\_case\_name"),
])
def test_markdown_v2_examples(markdown: str, expected: str) -> None:
    assert to_markdown_v2(markdown) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \n") + ["😀", "é"]), max_size=300),
       st.integers(min_value=2, max_value=40))  # 2: an emoji is two UTF-16 units
def test_parts_fit_and_keep_the_text(text: str, limit: int) -> None:
    parts = split_text(text, limit, utf16_length)
    assert all(utf16_length(p) <= limit for p in parts)
    assert "".join("".join(p.split()) for p in parts) == "".join(text.split())


def test_paragraphs_then_lines_then_words() -> None:
    text = "one two\nthree\n\nfour five six"
    assert split_text(text, 14) == ["one two\nthree", "four five six"]
    assert split_text(text, 8) == ["one two", "three", "four", "five six"]
    assert split_text("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert split_text("😀😀😀", 4, utf16_length) == ["😀😀", "😀"]
