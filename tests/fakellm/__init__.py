"""A scripted fake LLM server for integration tests: litellm's real HTTP stack, on loopback.

    with FakeLLM([Reply(text="hi"), Fault.rate_limit()]) as llm:
        litellm.completion(model="openai/gpt-4o", messages=[...], api_key="sk-test",
                           api_base=llm.openai_base_url, num_retries=0)
        assert llm.requests[0].model == "gpt-4o"

``api_base`` per litellm provider: ``llm.openai_base_url`` (``…/v1``) for ``openai/…``
and ``litellm.responses``; ``llm.anthropic_base_url`` (no ``/v1``: litellm appends
``/v1/messages``) for ``anthropic/…``; or ``llm.api_base(provider)``.

Each request takes the next script item (a turn, or a responder called with the
:class:`RecordedRequest`); then ``fallback``; then a 500 "fake LLM: script exhausted",
which also fails the ``with`` block (``strict=True``). Never imported by production code.
"""

from .recording import RecordedRequest, ToolResult
from .script import (
    Fault,
    Reply,
    Responder,
    Script,
    ScriptItem,
    StreamError,
    ToolCall,
    Truncated,
    Turn,
    Usage,
)
from .script_json import load_script, turn_from_json
from .server import FakeLLM, FakeLLMError

__all__ = [
    "FakeLLM",
    "FakeLLMError",
    "Fault",
    "RecordedRequest",
    "Reply",
    "Responder",
    "Script",
    "ScriptItem",
    "StreamError",
    "ToolCall",
    "ToolResult",
    "Truncated",
    "Turn",
    "Usage",
    "load_script",
    "turn_from_json",
]
