"""The fake LLM's Bedrock Converse wire, driven by litellm's real Bedrock client.

litellm signs every request with SigV4 (botocore) from explicit fake keys; ``aws_sandbox``
keeps botocore off this machine's AWS files and variables and refuses any host but
loopback, so a test that would reach AWS fails instead. ``deferred_gc`` keeps streams
abandoned after a mid-stream error from deadlocking httpcore (see its docstring).
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakellm import FakeLLM, Fault, RecordedRequest, Reply, StreamError, ToolCall, Truncated, Usage
from fakellm.bedrock import FAKE_AWS_CREDENTIALS, aws_sandbox, deferred_gc, event, frame
from test_fakellm import Answer, read_chunks, read_completion

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm: no network

import litellm  # noqa: E402
from botocore.eventstream import EventStreamBuffer  # noqa: E402
from litellm.exceptions import MidStreamFallbackError  # noqa: E402

MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
HI = [{"role": "user", "content": "hi"}]
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
STREAM = pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])


@pytest.fixture(autouse=True)
def sandbox(tmp_path: Path) -> Iterator[list[str]]:
    """The hosts refused so far; none may be left at teardown."""
    with aws_sandbox(tmp_path) as refused, deferred_gc():
        yield refused
    assert refused == [], "litellm tried to reach the network"


def call(llm: FakeLLM, *, stream: bool = False, timeout: float = 5.0, **kwargs: Any) -> Any:
    kwargs = {**FAKE_AWS_CREDENTIALS, "messages": HI, **kwargs}
    return litellm.completion(model=f"bedrock/converse/{MODEL_ID}", api_base=llm.bedrock_base_url,
                              num_retries=0, timeout=timeout, stream=stream, **kwargs)


def ask(llm: FakeLLM, *, stream: bool = False, **kwargs: Any) -> Answer:
    if stream:
        options = {"stream_options": {"include_usage": True}}
        return read_chunks(list(call(llm, stream=True, **options, **kwargs)))
    return read_completion(call(llm, **kwargs))


# -- replies ------------------------------------------------------------------------------


@STREAM
def test_text_reply_and_signed_request(stream: bool) -> None:
    with FakeLLM([Reply(text="Hello from the fake Bedrock model, in chunks.")]) as llm:
        answer = ask(llm, stream=stream)
        (request,) = llm.requests
    assert (answer.text, answer.finish, answer.calls) == (
        "Hello from the fake Bedrock model, in chunks.", "stop", [])
    suffix = "converse-stream" if stream else "converse"
    assert request.path == f"/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/{suffix}"
    assert (request.wire, request.model, request.stream) == ("bedrock", MODEL_ID, stream)
    assert request.body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert request.last_user_text == "hi"
    authorization = request.headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDFAKE/")
    assert "/us-east-1/bedrock/aws4_request" in authorization
    assert "x-amz-date" in request.headers
    assert "AKIDFAKE" not in repr(request)


@STREAM
def test_tool_calls_arrive_whole(stream: bool) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris", "note": "ünïcode, and a long value"},
                      id="tooluse_given"),
             ToolCall("get_weather", {"city": "Oslo"})]
    with FakeLLM([Reply(text="Checking.", tool_calls=calls)]) as llm:
        answer = ask(llm, stream=stream, tools=TOOLS)
        request = llm.requests[0]
    assert [(name, json.loads(args)) for _, name, args in answer.calls] == [
        ("get_weather", {"city": "Paris", "note": "ünïcode, and a long value"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert answer.calls[0][0] == "tooluse_given"
    assert answer.calls[1][0].startswith("tooluse_")
    assert (answer.text, answer.finish) == ("Checking.", "tool_calls")
    assert request.tool_names == ["get_weather"]
    assert request.body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {"json": WEATHER}
    if stream:  # the arguments really were split across several deltas
        assert answer.argument_fragments > len(calls)


def test_malformed_arguments_arrive_verbatim_only_when_streamed() -> None:
    raw = '{"city": "Par'
    with FakeLLM([Reply(tool_calls=[ToolCall("get_weather", raw)])] * 2) as llm:
        streamed, plain = ask(llm, stream=True), ask(llm)
    assert streamed.calls[0][1:] == ("get_weather", raw)
    assert json.loads(plain.calls[0][2]) == raw  # sent as a string input, JSON-encoded again


USAGE = Usage(input_tokens=1200, output_tokens=80, cached_tokens=1000, cache_write_tokens=100)


@STREAM
def test_usage_reaches_litellm(stream: bool) -> None:
    """Bedrock's inputTokens excludes cache reads and writes; litellm adds them back."""
    with FakeLLM([Reply(text="ok", usage=USAGE)]) as llm:
        assert ask(llm, stream=stream).tokens == (1200, 80, 1000, 0)


def test_cache_write_tokens() -> None:
    with FakeLLM([Reply(text="ok", usage=USAGE)]) as llm:
        usage = call(llm).usage
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (1000, 100)
    assert usage.total_tokens == 1280


@STREAM
def test_reasoning_text(stream: bool) -> None:
    with FakeLLM([Reply(text="42", reasoning="Six times seven is forty-two.")]) as llm:
        answer = ask(llm, stream=stream)
    assert (answer.text, answer.reasoning) == ("42", "Six times seven is forty-two.")


def test_max_tokens_reached() -> None:
    with FakeLLM([Reply(text="cut", max_tokens_reached=True)] * 2) as llm:
        assert ask(llm).finish == ask(llm, stream=True).finish == "length"


def test_bedrock_api_key_is_sent_as_bearer_instead_of_sigv4() -> None:
    with FakeLLM([Reply(text="ok")]) as llm:
        call(llm, api_key="fake-bedrock-api-key", aws_region_name="us-east-1",
             aws_access_key_id=None, aws_secret_access_key=None)
        assert llm.requests[0].headers["authorization"] == "Bearer fake-bedrock-api-key"


def test_without_api_base_aws_would_be_called_and_is_refused(sandbox: list[str]) -> None:
    with pytest.raises(litellm.APIConnectionError):
        litellm.completion(model=f"bedrock/converse/{MODEL_ID}", messages=HI, num_retries=0,
                           timeout=5, **FAKE_AWS_CREDENTIALS)
    assert sandbox == ["bedrock-runtime.us-east-1.amazonaws.com"]
    sandbox.clear()


def test_async_stream_assembles_tool_call() -> None:
    async def stream() -> list[Any]:
        chunks = await litellm.acompletion(
            model=f"bedrock/converse/{MODEL_ID}", messages=HI, api_base=llm.bedrock_base_url,
            num_retries=0, timeout=5, stream=True, tools=TOOLS, **FAKE_AWS_CREDENTIALS)
        return [chunk async for chunk in chunks]

    with FakeLLM([Reply(tool_calls=[ToolCall("get_weather", {"city": "Rome"})])]) as llm:
        built: Any = litellm.stream_chunk_builder(asyncio.run(stream()))
    (tool_call,) = built.choices[0].message.tool_calls
    assert json.loads(tool_call.function.arguments) == {"city": "Rome"}


def test_tool_loop_driven_by_a_responder() -> None:
    def agent_model(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"}, id="call_1")])
        (result,) = request.tool_results
        return Reply(text=f"{request.last_user_text}: {result.content} ({result.call_id})")

    question: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
    with FakeLLM(fallback=agent_model) as llm:
        first = ask(llm, tools=TOOLS, messages=question)
        call_id, name, arguments = first.calls[0]
        history = question + [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function",
                             "function": {"name": name, "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "sunny"}]
        second = ask(llm, tools=TOOLS, messages=history)
    assert second.text == "Weather?: sunny (call_1)"


# -- faults -------------------------------------------------------------------------------

E = litellm
FAULTS: dict[str, tuple[Fault, str, type[Exception], int]] = {
    # name: (scripted fault, x-amzn-errortype sent, litellm exception, its status_code)
    "rate_limit": (Fault.rate_limit(retry_after=None), "ThrottlingException", E.RateLimitError,
                   429),
    # Bedrock's token throttle; litellm's "too many tokens" context-window check is
    # case-sensitive, so this stays a rate limit (a compression trigger if that changed)
    "token_throttle": (Fault(429, "Too many tokens, please wait before trying again."),
                       "ThrottlingException", E.RateLimitError, 429),
    # litellm maps Bedrock's 500 to ServiceUnavailableError (503)
    "server_error": (Fault.server_error(), "InternalServerException",
                     E.ServiceUnavailableError, 503),
    "unavailable": (Fault.unavailable(), "ServiceUnavailableException",
                    E.ServiceUnavailableError, 503),
    "overloaded": (Fault.overloaded(), "ServiceUnavailableException",
                   E.ServiceUnavailableError, 503),
    "authentication": (Fault.authentication(), "UnrecognizedClientException",
                       E.AuthenticationError, 403),
    "payment_required": (Fault.payment_required(), "AccessDeniedException",
                         E.PermissionDeniedError, 403),
    "access_denied": (Fault(403, "You don't have access to the model with the specified "
                                 "model ID."), "AccessDeniedException",
                      E.PermissionDeniedError, 403),
    "model_not_found": (Fault.model_not_found(), "ResourceNotFoundException", E.NotFoundError,
                        404),
    "context_length_exceeded": (Fault.context_length_exceeded(), "ValidationException",
                                E.ContextWindowExceededError, 400),
    "validation": (Fault(400, "Malformed input request: #: extraneous key [foo] is not "
                              "permitted"), "ValidationException", E.BadRequestError, 400),
    "model_timeout": (Fault(408, "Model has timed out in processing the request."),
                      "ModelTimeoutException", E.Timeout, 408),
    "model_error": (Fault(424, "The model returned an error."), "ModelErrorException",
                    E.BadRequestError, 424),
}


@STREAM
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_maps_to_litellm_exception(fault: str, stream: bool) -> None:
    scripted, error_type, expected, status = FAULTS[fault]
    with FakeLLM([scripted]) as llm:
        with pytest.raises(Exception) as raised:
            ask(llm, stream=stream)
        assert len(llm.requests) == 1  # no hidden retries
    assert raised.type is expected
    assert getattr(raised.value, "status_code", None) == status
    headers = getattr(raised.value, "litellm_response_headers", None) or {}
    if not stream:  # litellm keeps the headers of plain responses only
        assert headers["x-amzn-errortype"].startswith(f"{error_type}:")


def post_error(llm: FakeLLM, path: str) -> tuple[urllib.error.HTTPError, bytes]:
    """POST ``{}`` to ``path`` without litellm: the error response (closed) and its body."""
    request = urllib.request.Request(f"{llm.url}{path}", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=5)
    with raised.value as error:
        return error, error.read()


def test_error_body_is_bedrocks_shape() -> None:
    with FakeLLM([Fault.context_length_exceeded()]) as llm:
        error, body = post_error(llm, "/model/some.model/converse")
    assert json.loads(body) == {"message": "Input is too long for requested model."}
    assert error.headers["x-amzn-errortype"].startswith("ValidationException:")
    assert error.headers["x-amzn-requestid"]


@pytest.mark.parametrize(("fault", "expected", "status"), [
    (Fault.rate_limit(retry_after=None), E.RateLimitError, 429),
    (Fault.overloaded(), E.ServiceUnavailableError, 503),
    (Fault.server_error(), E.ServiceUnavailableError, 503),
])
def test_in_stream_exception_after_partial_chunks(fault: Fault, expected: type[Exception],
                                                  status: int) -> None:
    chunks: list[Any] = []
    turn = StreamError(fault, Reply(text="This answer fails mid-way"), after_events=4)
    with FakeLLM([turn]) as llm, pytest.raises(MidStreamFallbackError) as raised:
        chunks.extend(call(llm, stream=True))
    assert isinstance(raised.value.original_exception, expected)
    assert raised.value.status_code == status
    assert chunks and raised.value.generated_content == "This answer fails mid-wa"


def test_in_stream_validation_error_is_raised_as_is() -> None:
    turn = StreamError(Fault.context_length_exceeded(), after_events=2)
    with FakeLLM([turn]) as llm, pytest.raises(litellm.ContextWindowExceededError):
        list(call(llm, stream=True))


def test_truncated_stream_raises_mid_stream_error() -> None:
    chunks: list[Any] = []
    turn = Truncated(Reply(text="This answer is cut off mid-way"), after_events=4)
    with FakeLLM([turn]) as llm, pytest.raises(MidStreamFallbackError) as raised:
        chunks.extend(call(llm, stream=True))
    assert "peer closed connection" in str(raised.value)
    assert chunks and "This answer is cut off mid-way".startswith(raised.value.generated_content)


def test_truncated_body_raises_api_connection_error() -> None:
    with FakeLLM([Truncated()]) as llm, pytest.raises(litellm.APIConnectionError):
        call(llm)


@STREAM
def test_delay_trips_the_client_timeout(stream: bool) -> None:
    with FakeLLM([Reply(text="too late", delay=30)]) as llm, pytest.raises(litellm.Timeout):
        call(llm, stream=stream, timeout=0.3)


def test_other_model_paths_are_unknown() -> None:
    with FakeLLM(strict=False) as llm:
        assert post_error(llm, "/model/x/invoke")[0].code == 404
    assert "/model/{modelId}/converse-stream" in llm.problems[0]


# -- event-stream framing -----------------------------------------------------------------


def test_frames_decode_with_botocore_across_any_split() -> None:
    """Prelude, headers, payload and both CRCs as botocore checks them, fed byte-ragged."""
    data = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "héllo"}})
    data += frame({":message-type": "exception", ":exception-type": "throttlingException",
                   ":content-type": "application/json"}, b'{"message": "slow down"}')
    buffer = EventStreamBuffer()
    messages = []
    for start in range(0, len(data), 7):
        buffer.add_data(data[start:start + 7])
        messages.extend(buffer)
    first, second = messages
    assert first.headers == {":event-type": "contentBlockDelta",
                             ":content-type": "application/json", ":message-type": "event"}
    assert json.loads(first.payload)["delta"] == {"text": "héllo"}
    assert second.to_response_dict()["status_code"] == 400
    assert second.headers[":exception-type"] == "throttlingException"
