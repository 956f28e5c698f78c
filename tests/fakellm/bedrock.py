"""AWS Bedrock Converse: ``POST /model/{modelId}/converse`` and ``…/converse-stream``.

The model id is in the (percent-encoded) path, not the body; the stream is AWS
event-stream binary framing (``application/vnd.amazon.eventstream``), which botocore's
``EventStreamBuffer`` decodes inside litellm. Requests are SigV4-signed by the client;
the fake records the ``authorization`` header but checks no signature.

Errors carry their type in the ``x-amzn-errortype`` header and only ``{"message": ...}``
in the body, as Bedrock sends them, so litellm classifies them by status and wording.
Bedrock sends no ``retry-after``; script ``Fault.rate_limit(retry_after=None)`` to match.
Like Anthropic, tool input is a JSON object, so malformed arguments (a raw string that
does not parse) only reach the client verbatim when streamed.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import socket
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .recording import RecordedRequest
from .script import Fault, Reply, ToolCall, Usage
from .wire import Wire, arguments_json, arguments_object

PATH = re.compile(r"/model/[^/]+/converse(-stream)?")
FAKE_AWS_CREDENTIALS = {"aws_access_key_id": "AKIDFAKE", "aws_secret_access_key": "fake",
                        "aws_region_name": "us-east-1"}
"""litellm kwargs for SigV4 with explicit keys and region: botocore looks nothing up."""
LOOPBACK = ("127.0.0.1", "::1", "localhost")

# (status, x-amzn-errortype, message) for the named Fault constructors, keyed by their
# openai_code and worded as Bedrock words them: litellm recognises "Input is too long" as
# a context overflow and "The security token included in the request is invalid" as an
# authentication failure; other errors it classifies by status alone.
NAMED = {
    "rate_limit_exceeded": (429, "ThrottlingException",
                            "Too many requests, please wait before trying again."),
    "context_length_exceeded": (400, "ValidationException",
                                "Input is too long for requested model."),
    "invalid_api_key": (403, "UnrecognizedClientException",
                        "The security token included in the request is invalid."),
    "payment_required": (403, "AccessDeniedException", "Model access is denied due to "
                         "INVALID_PAYMENT_INSTRUMENT:A valid payment instrument must be provided."),
    "model_not_found": (404, "ResourceNotFoundException", "Could not resolve the foundation "
                        "model from the provided model identifier."),
}
OVERLOADED = (503, "ServiceUnavailableException", "Bedrock is unable to process your request.")
TYPES = {400: "ValidationException", 401: "UnrecognizedClientException",
         403: "AccessDeniedException", 404: "ResourceNotFoundException",
         408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
         500: "InternalServerException", 503: "ServiceUnavailableException"}
# Exceptions a Converse stream can carry mid-way (members of ConverseStreamOutput).
STREAM_EXCEPTIONS = ("internalServerException", "modelStreamErrorException",
                     "validationException", "throttlingException", "serviceUnavailableException")


def bedrock_error(fault: Fault) -> tuple[int, str, str]:
    """The HTTP status, ``x-amzn-errortype`` and message Bedrock answers ``fault`` with.

    Named :class:`Fault` constructors get Bedrock's own wording (Anthropic's 529 becomes a
    503); any other fault keeps its message and gets the exception type of its status
    (``InternalServerException`` if unknown; a 401 is sent as Bedrock's 403).
    """
    if fault.openai_code in NAMED:
        return NAMED[fault.openai_code]
    if fault.status == 529:
        return OVERLOADED
    kind = TYPES.get(fault.status, "InternalServerException")
    return (403 if fault.status == 401 else fault.status), kind, fault.message


def usage_json(usage: Usage) -> dict[str, Any]:
    # Like Anthropic, Bedrock's inputTokens counts only the uncached part of the prompt.
    uncached = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    return {"inputTokens": uncached, "outputTokens": usage.output_tokens,
            "totalTokens": usage.input_tokens + usage.output_tokens,
            "cacheReadInputTokens": usage.cached_tokens,
            "cacheWriteInputTokens": usage.cache_write_tokens}


def stop_reason(reply: Reply) -> str:
    if reply.max_tokens_reached:
        return "max_tokens"
    return "tool_use" if reply.tool_calls else "end_turn"


class BedrockConverse(Wire):
    name = "bedrock"
    paths = ("/model/{modelId}/converse", "/model/{modelId}/converse-stream")
    stream_content_type = "application/vnd.amazon.eventstream"

    def handles(self, path: str) -> bool:
        return PATH.fullmatch(path) is not None

    def reply(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            content.append({"reasoningContent": {"reasoningText": {
                "text": reply.reasoning, "signature": self.ids.new("sig")}}})
        if reply.text is not None:
            content.append({"text": reply.text})
        content += [{"toolUse": {**self._tool_use(call), "input": arguments_object(call)}}
                    for call in reply.tool_calls]
        return {"output": {"message": {"role": "assistant", "content": content}},
                "stopReason": stop_reason(reply), "usage": usage_json(reply.usage),
                "metrics": {"latencyMs": 42}}

    def stream(self, reply: Reply, request: RecordedRequest) -> Iterator[bytes]:
        yield event("messageStart", {"role": "assistant"})
        index = 0
        if reply.reasoning is not None:
            for piece in self.pieces(reply.reasoning):
                yield delta(index, {"reasoningContent": {"text": piece}})
            yield delta(index, {"reasoningContent": {"signature": self.ids.new("sig")}})
            yield event("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        if reply.text is not None:  # text blocks have no contentBlockStart
            for piece in self.pieces(reply.text):
                yield delta(index, {"text": piece})
            yield event("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        for call in reply.tool_calls:
            yield event("contentBlockStart", {"contentBlockIndex": index,
                                              "start": {"toolUse": self._tool_use(call)}})
            for piece in self.pieces(arguments_json(call)):
                yield delta(index, {"toolUse": {"input": piece}})
            yield event("contentBlockStop", {"contentBlockIndex": index})
            index += 1
        yield event("messageStop", {"stopReason": stop_reason(reply)})
        yield event("metadata", {"usage": usage_json(reply.usage), "metrics": {"latencyMs": 42}})

    def error(self, fault: Fault) -> dict[str, Any]:
        return {"message": bedrock_error(fault)[2]}

    def error_status(self, fault: Fault) -> int:
        return bedrock_error(fault)[0]

    def error_headers(self, fault: Fault) -> dict[str, str]:
        kind = bedrock_error(fault)[1]
        return {"x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                "x-amzn-requestid": self.ids.new("req", "-")}

    def stream_error(self, fault: Fault, sequence: int) -> bytes:
        _, kind, message = bedrock_error(fault)
        member = kind[0].lower() + kind[1:]
        if member not in STREAM_EXCEPTIONS:
            member = "internalServerException"
        headers = {":message-type": "exception", ":exception-type": member,
                   ":content-type": "application/json"}
        return frame(headers, json.dumps({"message": message}).encode())

    def _tool_use(self, call: ToolCall) -> dict[str, Any]:
        return {"toolUseId": call.id or self.ids.new("tooluse"), "name": call.name}


def delta(index: int, body: dict[str, Any]) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": body})


def event(kind: str, body: dict[str, Any]) -> bytes:
    """One event message; ``p`` pads the payload as Bedrock does (hides content lengths)."""
    payload = json.dumps({**body, "p": "abcdefghijkl"}, ensure_ascii=False).encode()
    return frame({":event-type": kind, ":content-type": "application/json",
                  ":message-type": "event"}, payload)


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """An AWS event-stream message: prelude (total length, headers length, CRC32),
    string headers, payload and a CRC32 of everything before it; big-endian throughout."""
    head = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    string_type = 7
    return (struct.pack(">B", len(raw_name)) + raw_name
            + struct.pack(">BH", string_type, len(raw_value)) + raw_value)


@contextlib.contextmanager
def aws_sandbox(scratch: Path) -> Iterator[list[str]]:
    """Keep litellm's Bedrock client off the machine's AWS setup and off the network.

    Clears ``AWS_*`` variables (``AWS_BEARER_TOKEN_BEDROCK`` would replace SigV4), points
    the AWS config and credentials files at missing paths under ``scratch`` (boto3 parses
    them even when keys are passed explicitly), disables the EC2 metadata service and
    refuses to resolve any host but loopback. Yields the hosts refused, for the test to
    check; restores everything on exit.
    """
    saved = {name: value for name, value in os.environ.items() if name.startswith("AWS_")}
    for name in saved:
        del os.environ[name]
    os.environ.update(AWS_CONFIG_FILE=str(scratch / "no-aws-config"),
                      AWS_SHARED_CREDENTIALS_FILE=str(scratch / "no-aws-credentials"),
                      AWS_EC2_METADATA_DISABLED="true")
    refused: list[str] = []
    resolve = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in LOOPBACK:
            refused.append(name)
            raise OSError(f"fake LLM: network access to {name!r} refused in aws_sandbox")
        return resolve(host, *args, **kwargs)

    socket.getaddrinfo = loopback_only
    try:
        yield refused
    finally:
        socket.getaddrinfo = resolve
        for name in [name for name in os.environ if name.startswith("AWS_")]:
            del os.environ[name]
        os.environ.update(saved)


@contextlib.contextmanager
def deferred_gc() -> Iterator[None]:
    """Run no cyclic garbage collection until exit, then collect.

    After a mid-stream error litellm abandons the stream's httpcore generator in a
    reference cycle (every wire, not only Bedrock). If the collector finalizes it while
    the same thread is inside httpcore's connection pool lock (the next request), the
    thread deadlocks on that non-reentrant lock (encode/httpcore#990). Collecting at exit
    finalizes such streams where no lock is held, so a test cannot hang at random. Only the
    youngest generation is collected: with collection off, everything allocated since
    entry is still in it, and a full collection of litellm's heap is slow.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect(0)
        if enabled:
            gc.enable()
