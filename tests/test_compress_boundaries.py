"""Where compression cuts a transcript, and the cost of deciding when to: generated
transcripts, no network (the summariser is a scripted in-process model client)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from hermes.agent.compress import Compressor, plan_cut
from hermes.agent.repair import repair_messages
from hermes.agent.summary import (
    SUMMARY_HEADER,
    split_summary,
    summary_text,
    truncation_text,
)
from hermes.agent.tokens import TokenMeter, estimate_tokens
from hermes.config.schema import CompressionConfig
from hermes.models.base import ModelClient
from hermes.models.errors import ErrorClass, ModelCallError
from hermes.models.types import ModelReply

Message = dict[str, Any]


class ScriptedSummariser(ModelClient):
    """Answers every summary request with ``text``; raises when ``text`` is None."""

    model = "summariser"

    def __init__(self, text: str | None):
        self.text = text
        self.requests: list[list[Message]] = []

    def complete(self, messages, tools=None, *, stream=False, callbacks=None, **params):
        self.requests.append(messages)
        if self.text is None:
            raise ModelCallError("summariser: unavailable", ErrorClass.SERVER_ERROR)
        return ModelReply(self.text)


def compressor(summary: str | None = "## Goal\nkeep going", window: int = 2_000,
               protect_first: int = 3) -> Compressor:
    settings = CompressionConfig(context_window=window, protect_first=protect_first)
    client = ScriptedSummariser(summary)
    return Compressor(settings, model=client, summariser=client)


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Valid transcripts: turns of a user message, tool steps (a call or several, each
    with its result) and a final answer; the last turn may stop anywhere."""
    text = st.integers(0, 2_000).map(lambda n: "t" * n)
    messages: list[Message] = [{"role": "system", "content": draw(text)}]
    for turn in range(draw(st.integers(1, 6))):
        messages.append({"role": "user", "content": f"u{turn} " + draw(text)})
        for step in range(draw(st.integers(0, 3))):
            ids = [f"c{turn}-{step}-{k}" for k in range(draw(st.integers(1, 3)))]
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "blob", "arguments": "{}"}}
                for i in ids]})
            messages += [{"role": "tool", "tool_call_id": i, "name": "blob",
                          "content": draw(text)} for i in ids]
        messages.append({"role": "assistant", "content": f"a{turn} " + draw(text)})
    ends = [end for end in range(2, len(messages) + 1)  # never inside a tool step
            if end == len(messages) or messages[end]["role"] != "tool"]
    return messages[:draw(st.sampled_from(ends))]


def last_step(messages: list[Message]) -> list[Message]:
    start = len(messages) - 1
    while messages[start]["role"] == "tool":
        start -= 1
    return messages[start:]


@settings(max_examples=150, deadline=None)
@given(transcripts(), st.integers(1, 6), st.sampled_from(["## Goal\nx", None]),
       st.integers(300, 5_000))
def test_cuts_never_split_tool_calls_and_keep_head_and_tail(
        messages: list[Message], protect_first: int, summary: str | None, window: int) -> None:
    out = compressor(summary, window, protect_first).compress(messages)
    if out is None:
        return
    result = out.messages
    assert repair_messages(result) == result  # no orphans, no missing results, no merges
    assert result[:protect_first] == messages[:protect_first]
    step = last_step(messages)  # kept verbatim; a user message may take the note in front
    assert result[len(result) - len(step) + 1:] == step[1:]
    first = result[-len(step)]
    assert first == step[0] or (first["content"].endswith("\n\n" + step[0]["content"])
                                and first["role"] == step[0]["role"] == "user")
    assert len(result) <= len(messages) + 1
    assert sum(SUMMARY_HEADER in str(m.get("content")) or "truncated" in str(m.get("content"))
               for m in result) <= 1


@settings(max_examples=60, deadline=None)
@given(transcripts(), st.integers(1, 6), st.integers(0, 3_000))
def test_the_middle_lies_between_whole_steps(messages: list[Message], protect_first: int,
                                             budget: int) -> None:
    cut = plan_cut(messages, [estimate_tokens(m) for m in messages], protect_first, budget)
    if cut is None:
        return
    assert protect_first <= cut.head < cut.tail <= len(messages)
    assert messages[cut.head]["role"] != "tool" and messages[cut.head - 1]["role"] != "user"
    assert cut.tail == len(messages) or messages[cut.tail]["role"] != "tool"


def test_the_summary_is_updated_not_summarised_again() -> None:
    summariser = ScriptedSummariser("## Goal\nsecond")
    settings_ = CompressionConfig(context_window=400, protect_first=1)
    summary = summary_text("## Goal\nfirst")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": summary},
                {"role": "assistant", "content": "a" * 800}, {"role": "user", "content": "q"}]
    out = Compressor(settings_, model=summariser, summariser=summariser).compress(messages)
    assert out is not None and out.method == "summarised"
    asked = summariser.requests[0][1]["content"]
    assert "<previous-summary>\n## Goal\nfirst\n</previous-summary>" in asked
    assert "[Summary of the earlier" not in asked.split("<messages>")[1]
    assert split_summary(out.messages[1]["content"]) == ("## Goal\nsecond", "q")


def test_truncation_keeps_the_previous_summary() -> None:
    text = truncation_text(4, "## Goal\nfirst")
    assert text.startswith("[Earlier conversation truncated: 4 messages")
    assert split_summary(text) == ("## Goal\nfirst", "")


def test_due_at_exactly_the_threshold() -> None:
    c = compressor(window=1_000)  # threshold 0.5: 500 tokens
    below = [{"role": "system", "content": "s" * 4 * 495}]  # 4 + 495 tokens
    assert c.estimate(below) == 499 and not c.due(below)
    assert c.due([{"role": "system", "content": "s" * 4 * 496}])


def test_the_meter_counts_appended_messages_once_and_new_lists_afresh() -> None:
    meter, messages = TokenMeter(), [{"role": "user", "content": "abcd"}]
    assert meter.measure(messages) == 5
    messages.append({"role": "assistant", "content": "x" * 40})
    assert meter.measure(messages) == 5 + 14
    replaced = [messages[0]]
    assert meter.measure(replaced) == 5
    messages[-1] = {"role": "assistant", "content": ""}  # not an append: counted afresh
    assert meter.measure(messages) == 5 + 4


def test_the_check_before_each_call_is_cheap() -> None:
    c = compressor(window=10_000_000)
    messages = [{"role": "tool", "tool_call_id": str(i), "content": "x" * 3_000}
                for i in range(2_000)]
    c.due(messages)
    started = time.perf_counter()
    for _ in range(1_000):
        messages.append({"role": "user", "content": "hello"})
        c.due(messages)
    per_call = (time.perf_counter() - started) / 1_000
    assert per_call < 100e-6  # measured ~2 µs; the loop's budget is 2 ms


def test_the_recent_share_must_be_below_the_threshold() -> None:
    with pytest.raises(ValidationError, match="protect_recent_fraction"):
        CompressionConfig(threshold=0.3, protect_recent_fraction=0.3)
