"""A scripted fake LLM server for integration tests: litellm's real HTTP stack, on loopback.

    with FakeLLM([Reply(text="hi"), Fault.rate_limit()]) as llm:
        litellm.completion(model="openai/gpt-4o", messages=[...], api_key="sk-test",
                           api_base=llm.openai_base_url, num_retries=0)
        assert llm.requests[0].model == "gpt-4o"

``api_base`` per litellm provider: ``llm.openai_base_url`` (``…/v1``) for ``openai/…``
and ``litellm.responses``; ``llm.anthropic_base_url`` (no ``/v1``: litellm appends
``/v1/messages``) for ``anthropic/…``; ``llm.bedrock_base_url`` (litellm appends
``/model/{id}/converse[-stream]``) for ``bedrock/converse/…``; or ``llm.api_base(provider)``.

Bedrock requests are SigV4-signed; pass explicit fake keys so botocore looks nothing up,
and keep it off the machine's AWS setup and the network (see :mod:`fakellm.bedrock`)::

    with aws_sandbox(tmp_path), deferred_gc(), FakeLLM([Reply(text="hi")]) as llm:
        litellm.completion(model="bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0",
                           messages=[...], api_base=llm.bedrock_base_url, num_retries=0,
                           **FAKE_AWS_CREDENTIALS)  # aws_access_key_id, …_secret_…, region
        assert llm.requests[0].headers["authorization"].startswith("AWS4-HMAC-SHA256")

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
