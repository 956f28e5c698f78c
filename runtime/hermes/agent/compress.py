"""Context compression: shorten a transcript that nears the model's context window.

The transcript is cut in three: the **head** (system prompt and first exchange,
``protect_first`` messages, extended to end on a whole step and never on a user
message) and the **tail** (the newest messages within ``protect_recent_fraction``
of the window, at least the last step) stay verbatim; the **middle** goes. A cut
never falls between an assistant's tool calls and their results. First, bulky
tool outputs in the middle are cleared; when that is not enough, the middle is
replaced by a summary from the summariser model (which updates the previous
summary, if the middle holds one), and when no summary can be had, by a note of
how many messages were dropped. The caller continues the conversation in a child
session (``continue_in_child``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from hermes.agent.summary import split_summary, summarise, summary_text, truncation_text
from hermes.agent.tokens import TokenMeter, context_window, estimate_tokens
from hermes.config.schema import CompressionConfig, ProviderConfig
from hermes.models.base import ModelClient
from hermes.models.errors import ModelCallError
from hermes.models.types import Usage
from hermes.sessions.store import SessionStore

Message = dict[str, Any]
Method = Literal["cleared", "summarised", "truncated"]
CLEARABLE_CHARS = 200
"""Tool outputs longer than this are cleared; shorter ones cost less than the note."""
CLEARED_NOTE = "[tool output cleared: {chars} chars]"
SETTLE = 0.7
"""Clearing alone is enough when it brings the estimate below this share of the
threshold: just below it, the next model call would compress again."""
MIN_SUMMARY_INPUT_CHARS = 16_000


@dataclass(frozen=True)
class Cut:
    """Where the middle of a transcript starts and ends (``messages[head:tail]``)."""

    head: int
    tail: int


@dataclass(frozen=True)
class Compressed:
    """A compressed transcript, and how it was made."""

    messages: list[Message]
    method: Method
    replaced: int
    """Messages of the middle that were cleared, summarised or dropped."""
    usage: Usage | None = None
    """The summariser call's usage, when there was one."""


class Compressor:
    """Decides when one agent's transcript needs compressing, and compresses it."""

    def __init__(self, settings: CompressionConfig, *, model: ModelClient,
                 summariser: ModelClient, fixed_tokens: int = 0):
        self.settings = settings
        self.model = model
        """The main model, whose window matters."""
        self.summariser = summariser
        self.fixed_tokens = fixed_tokens
        """Tokens sent with every call besides the messages (the tool schemas)."""
        self._window: int | None = settings.context_window
        self._meter = TokenMeter()

    @property
    def window(self) -> int:
        """The context window in tokens, looked up on first use."""
        if self._window is None:
            self._window = context_window(self.model)
        return self._window

    def estimate(self, messages: list[Message]) -> int:
        """Estimated tokens of a call with ``messages`` (incremental: cheap to repeat)."""
        return self._meter.measure(messages) + self.fixed_tokens

    def due(self, messages: list[Message]) -> bool:
        """Whether the transcript has reached the threshold and should be compressed."""
        return self.estimate(messages) >= self.settings.threshold * self.window

    def compress(self, messages: list[Message], *, overflowed: bool = False,
                 cancelled: Callable[[], bool] | None = None) -> Compressed | None:
        """A shorter transcript, or None when there is no middle to compress.

        ``overflowed``: the provider said the transcript does not fit, so the real
        window is at most its estimate; that lower window is kept from now on.
        """
        if overflowed:
            self._window = min(self.window, self.estimate(messages))
        sizes = [estimate_tokens(m) for m in messages]
        cut = plan_cut(messages, sizes, self.settings.protect_first,
                       int(self.window * self.settings.protect_recent_fraction))
        if cut is None:
            return None
        head, middle, tail = messages[:cut.head], messages[cut.head:cut.tail], messages[cut.tail:]
        cleared, count = clear_tool_outputs(middle)
        if count and self._fits(sizes, cut, cleared):
            return Compressed([*head, *cleared, *tail], "cleared", count)
        previous, rest = take_summary(middle)
        note, method, usage = self._note(rest, previous, cancelled)
        return Compressed(attach_note(head, note, tail), method, len(middle), usage)

    def _fits(self, sizes: list[int], cut: Cut, cleared: list[Message]) -> bool:
        kept = sum(sizes[:cut.head]) + sum(sizes[cut.tail:])
        total = self.fixed_tokens + kept + sum(estimate_tokens(m) for m in cleared)
        return total <= SETTLE * self.settings.threshold * self.window

    def _note(self, middle: list[Message], previous: str | None,
              cancelled: Callable[[], bool] | None) -> tuple[str, Method, Usage | None]:
        """The summary of ``middle``, or a truncation note when the summariser fails."""
        try:
            body, usage = summarise(
                self.summariser, middle, previous, max_words=self.settings.summary_max_words,
                max_input_chars=max(MIN_SUMMARY_INPUT_CHARS, self.window * 2),
                cancelled=cancelled)
        except ModelCallError:
            return truncation_text(len(middle), previous), "truncated", None
        return summary_text(body), "summarised", usage


def plan_cut(messages: list[Message], sizes: list[int], protect_first: int,
             tail_budget: int) -> Cut | None:
    """The middle to compress, or None when head and tail leave nothing between them
    but the previous summary (which a new one would merely restate)."""
    head = _head_end(messages, protect_first)
    summary_at = next((i for i in range(head, len(messages))
                       if _is_summary(messages[i])), None)
    floor = head if summary_at is None else summary_at + 1  # the old summary is redone
    tail = _tail_start(messages, sizes, tail_budget, floor)
    bare_summary = (summary_at == head and tail == head + 1
                    and _summary_rest(messages[head]) == "")
    return None if tail <= head or bare_summary else Cut(head, tail)


def _is_cut(messages: list[Message], index: int) -> bool:
    """A cut before ``index`` keeps every tool result with the call it answers."""
    return index >= len(messages) or messages[index].get("role") != "tool"


def _head_end(messages: list[Message], protect_first: int) -> int:
    """End of the head: ``protect_first`` messages, extended to a cut that does not end
    on a user message (the summary after it is a user message, too)."""
    end = min(max(protect_first, 1), len(messages))
    while end < len(messages) and (not _is_cut(messages, end)
                                   or messages[end - 1].get("role") == "user"):
        end += 1
    return end


def _tail_start(messages: list[Message], sizes: list[int], budget: int, floor: int) -> int:
    """Start of the tail: the earliest cut whose messages fit ``budget``; at least the
    last step (a message, or a tool call with its results), and never below ``floor``."""
    start, used = len(messages), 0
    for index in range(len(messages) - 1, floor - 1, -1):
        used += sizes[index]
        if not _is_cut(messages, index):
            continue
        if used > budget and start < len(messages):
            break
        start = index
    return max(start, floor)


def _is_summary(message: Message) -> bool:
    return _summary_rest(message) is not None


def _summary_rest(message: Message) -> str | None:
    """The text after the summary in a summary message, else None."""
    found = split_summary(message.get("content")) if message.get("role") == "user" else None
    return None if found is None else found[1]


def clear_tool_outputs(messages: list[Message]) -> tuple[list[Message], int]:
    """Copies of ``messages`` with bulky tool outputs replaced by a short note, and how
    many were cleared."""
    cleared = [_cleared(m) for m in messages]
    return cleared, sum(a is not b for a, b in zip(cleared, messages, strict=True))


def _cleared(message: Message) -> Message:
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, str) \
            or len(content) <= CLEARABLE_CHARS:
        return message
    return {**message, "content": CLEARED_NOTE.format(chars=len(content))}


def take_summary(middle: list[Message]) -> tuple[str | None, list[Message]]:
    """The previous summary's body, if the middle holds one, and the middle without it
    (a user message it had been merged with is kept)."""
    for index, message in enumerate(middle):
        found = split_summary(message.get("content")) if message.get("role") == "user" else None
        if found is not None:
            body, rest = found
            keep = [{**message, "content": rest}] if rest else []
            return body, [*middle[:index], *keep, *middle[index + 1:]]
    return None, middle


def attach_note(head: list[Message], note: str, tail: list[Message]) -> list[Message]:
    """``head``, the note as a user message, ``tail``; a tail that starts with a user
    message takes the note in front of its text instead (no two user messages in a row)."""
    first = tail[0] if tail else None
    if first is not None and first.get("role") == "user" and isinstance(first.get("content"),
                                                                       str):
        return [*head, {**first, "content": f"{note}\n\n{first['content']}"}, *tail[1:]]
    return [*head, {"role": "user", "content": note}, *tail]


def continue_in_child(store: SessionStore, parent_id: str, compressed: Compressed) -> str:
    """Start the child session that continues ``parent_id`` with the compressed
    transcript (same source, model, title and system prompt), end the parent with
    reason ``compression``, and return the child's id."""
    parent = store.get_session(parent_id)
    child = store.create_session(parent.source, parent.model, parent_id,
                                 system_prompt=parent.system_prompt, title=parent.title)
    store.add_messages(child, [_stored(m) for m in compressed.messages
                               if m.get("role") != "system"])
    if compressed.usage is not None:
        store.add_usage(child, compressed.usage)
    store.end_session(parent_id, "compression")
    return child


def _stored(message: Message) -> Message:
    """A transcript message as ``SessionStore.add_messages`` takes it."""
    optional = {k: message[k] for k in ("tool_calls", "tool_call_id", "name")
                if message.get(k) is not None}
    return {"role": message["role"], "content": message.get("content"), **optional}


def summariser_client(main: ModelClient, provider: ProviderConfig,
                      model: str | None) -> ModelClient:
    """The client that writes summaries: ``main`` itself, or ``model`` at the same
    provider (endpoint, key, retries and fallbacks)."""
    if model is None or model == main.model:
        return main
    from hermes.models.litellm_client import LiteLLMClient

    return LiteLLMClient(provider.model_copy(update={"model": model}))
