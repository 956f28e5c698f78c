"""What the fake LLM answers: scripted turns, consumed one per request.

A turn is a :class:`Reply` (text, tool calls, reasoning, usage), a :class:`Fault`
(an HTTP error in the provider's own error shape), a :class:`Truncated` reply (the
connection is closed part-way through) or a :class:`StreamError` (an error event in
the middle of a stream). Every turn may carry a ``delay`` before the first byte, to
trip client timeouts. A :data:`Responder` builds the turn from the request instead.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .recording import RecordedRequest


@dataclass(frozen=True)
class Usage:
    """Token counts, wire-neutral: ``input_tokens`` is the whole prompt, cached part included.

    Each format reports them the way its provider does (Anthropic's wire
    ``input_tokens`` excludes cache reads and writes), so litellm's
    ``usage.prompt_tokens`` equals ``input_tokens`` for every format.
    """

    input_tokens: int = 10
    output_tokens: int = 5
    cached_tokens: int = 0
    """Prompt tokens read from the cache (OpenAI ``cached_tokens``,
    Anthropic ``cache_read_input_tokens``)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the cache (Anthropic ``cache_creation_input_tokens`` only)."""
    reasoning_tokens: int = 0
    """Part of ``output_tokens`` spent reasoning (OpenAI formats only)."""

    def __post_init__(self) -> None:
        if self.cached_tokens + self.cache_write_tokens > self.input_tokens:
            raise ValueError("Usage: cached_tokens + cache_write_tokens exceed input_tokens")
        if self.reasoning_tokens > self.output_tokens:
            raise ValueError("Usage: reasoning_tokens exceed output_tokens")


@dataclass(frozen=True)
class ToolCall:
    """One function call. ``arguments`` as a dict is sent as JSON; a str is sent verbatim."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    """The call id; generated (``call_…``, ``toolu_…``) when None."""


@dataclass(frozen=True)
class Reply:
    """A successful model response."""

    text: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    reasoning: str | None = None
    """Reasoning text: ``reasoning_content`` (OpenAI-compatible chat), a thinking block
    (Anthropic) or a reasoning summary item (Responses)."""
    usage: Usage = field(default_factory=Usage)
    max_tokens_reached: bool = False
    """Finish as if cut off by the output limit (``length`` / ``max_tokens`` / ``incomplete``)."""
    delay: float = 0.0
    """Seconds to wait before answering; cut short when the server shuts down."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))  # lists compare equal


@dataclass(frozen=True)
class Fault:
    """An HTTP error answered instead of a reply, rendered in each provider's error shape.

    Prefer the named constructors (:meth:`rate_limit`, :meth:`context_length_exceeded`, ...):
    their messages and codes are the ones litellm's exception mapping recognises.
    """

    status: int
    message: str
    openai_type: str = "server_error"
    openai_code: str | None = None
    anthropic_type: str = "api_error"
    anthropic_message: str | None = None
    """Anthropic's wording when it differs from ``message``."""
    responses_message: str | None = None
    """The Responses API's wording when it differs from ``message``."""
    param: str | None = None
    retry_after: float | None = None
    """Seconds, sent as ``retry-after`` (and ``retry-after-ms``)."""
    delay: float = 0.0

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1.0) -> Fault:
        return cls(429, "Rate limit reached for requests. Please try again later.",
                   "requests", "rate_limit_exceeded", "rate_limit_error", retry_after=retry_after)

    @classmethod
    def server_error(cls) -> Fault:
        return cls(500, "The server had an error while processing your request. Sorry about that!",
                   "server_error", None, "api_error")

    @classmethod
    def unavailable(cls) -> Fault:
        return cls(503, "Service temporarily unavailable, please try again later.",
                   "server_error", None, "api_error")

    @classmethod
    def overloaded(cls) -> Fault:
        """Anthropic's 529 ``overloaded_error``."""
        return cls(529, "Overloaded", "server_error", None, "overloaded_error")

    @classmethod
    def authentication(cls) -> Fault:
        # "Incorrect API key provided" is what litellm needs to map an OpenAI 401
        # (type invalid_request_error) to AuthenticationError rather than BadRequestError.
        return cls(401, "Incorrect API key provided: sk-****. You can find your API key at "
                   "https://platform.openai.com/account/api-keys.",
                   "invalid_request_error", "invalid_api_key", "authentication_error",
                   anthropic_message="invalid x-api-key")

    @classmethod
    def payment_required(cls) -> Fault:
        return cls(402, "Payment required: this account has no credit left.",
                   "billing_error", "payment_required", "billing_error")

    @classmethod
    def model_not_found(cls, model: str = "no-such-model") -> Fault:
        return cls(404, f"The model `{model}` does not exist or you do not have access to it.",
                   "invalid_request_error", "model_not_found", "not_found_error", param="model")

    @classmethod
    def context_length_exceeded(cls) -> Fault:
        """A 400 worded the way each provider words it."""
        return cls(
            400,
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130000 tokens. Please reduce the length of the messages.",
            "invalid_request_error", "context_length_exceeded", "invalid_request_error",
            anthropic_message="prompt is too long: 210000 tokens > 200000 maximum",
            responses_message="Your input exceeds the context window of this model. "
            "Please adjust your input and try again.",
            param="messages",
        )


@dataclass(frozen=True)
class Truncated:
    """Start answering ``reply``, then close the connection abruptly.

    Streaming: after ``after_events`` SSE events, without the terminating chunk.
    Non-streaming: after half of the JSON body (``Content-Length`` promises all of it).
    """

    reply: Reply = field(default_factory=lambda: Reply(text="This answer is cut off mid-way"))
    after_events: int = 3
    delay: float = 0.0


@dataclass(frozen=True)
class StreamError:
    """Start streaming ``reply``, then after ``after_events`` events send ``fault`` as an
    in-stream error event and end the stream cleanly, as providers do when they fail
    mid-response (Anthropic's mid-stream ``overloaded_error``). A non-streaming request
    gets ``fault`` as a plain HTTP error.
    """

    fault: Fault = field(default_factory=lambda: Fault.overloaded())
    reply: Reply = field(default_factory=lambda: Reply(text="This answer fails mid-way"))
    after_events: int = 3
    delay: float = 0.0


Turn = Reply | Fault | Truncated | StreamError
TURN_TYPES = (Reply, Fault, Truncated, StreamError)
Responder = Callable[["RecordedRequest"], Turn]
"""Answers one request from its content: ``lambda request: Reply(text=...)``."""
ScriptItem = Turn | Responder


class ScriptExhausted(Exception):
    """A request arrived after the last scripted turn and there is no fallback."""


class Script:
    """An ordered queue of turns (or responders), thread-safe; one is taken per request."""

    def __init__(self, items: Iterable[ScriptItem] = (), fallback: Responder | None = None):
        self._items: deque[ScriptItem] = deque(items)
        self._fallback = fallback
        self._lock = threading.Lock()

    def push(self, *items: ScriptItem) -> None:
        with self._lock:
            self._items.extend(items)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._items)

    def drop_pending(self) -> int:
        """Forget the items no request took; how many there were."""
        with self._lock:
            dropped = len(self._items)
            self._items.clear()
            return dropped

    def next_turn(self, request: RecordedRequest) -> Turn:
        """The turn answering ``request``; raises :class:`ScriptExhausted` when none is left."""
        with self._lock:
            item = self._items.popleft() if self._items else self._fallback
        if item is None:
            raise ScriptExhausted("fake LLM: script exhausted")
        if isinstance(item, TURN_TYPES):
            return item
        turn = item(request)
        if not isinstance(turn, TURN_TYPES):
            raise TypeError(f"fake LLM: responder returned {turn!r}, "
                            "expected Reply, Fault, Truncated or StreamError")
        return turn
