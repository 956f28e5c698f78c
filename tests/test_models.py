"""The model layer against the fake LLM: litellm's real HTTP stack on loopback."""

from __future__ import annotations

import json
import socket

import pytest

from fakellm import FakeLLM, Fault, Reply, StreamError, ToolCall, Truncated, Usage
from hermes.config.schema import FallbackConfig, ProviderConfig
from hermes.models.caching import with_cache_breakpoints
from hermes.models.errors import (
    ContextOverflowError,
    ErrorClass,
    ModelCallError,
    classify,
    connect_failure,
)
from hermes.models.litellm_client import LiteLLMClient
from hermes.models.modes import detect_api_mode
from hermes.models.types import StreamCallbacks

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]}}}]
MODES = {
    "chat_completions": ("openai", "gpt-4o"),
    "anthropic_messages": ("anthropic", "claude-sonnet-4-5"),
    "responses": ("openai", "gpt-4o"),
}


def client(llm: FakeLLM, mode: str = "chat_completions", **extra) -> LiteLLMClient:
    provider, model = MODES[mode]
    base = llm.anthropic_base_url if provider == "anthropic" else llm.openai_base_url
    settings = ProviderConfig(name="test", provider=provider, model=model, api_base=base,
                              api_key="sk-test", api_mode=mode, timeout=5, max_retries=2,
                              retry_backoff=0.0, **extra)
    return LiteLLMClient(settings)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("stream", [False, True])
def test_text_and_tool_calls_in_every_mode(mode: str, stream: bool) -> None:
    script = [Reply(text="Hello there", usage=Usage(input_tokens=20, output_tokens=7,
                                                    cached_tokens=8)),
              Reply(tool_calls=[ToolCall("read_file", {"path": "a.txt"}, id="call_1"),
                                ToolCall("read_file", {"path": "b.txt"}, id="call_2")])]
    pieces: list[str] = []
    started: list[str] = []
    callbacks = StreamCallbacks(on_text=pieces.append,
                                on_tool_call=lambda i, name: started.append(name))
    with FakeLLM(script) as llm:
        c = client(llm, mode)
        reply = c.complete(MESSAGES, TOOLS, stream=stream, callbacks=callbacks)
        assert reply.content == "Hello there" and reply.tool_calls == ()
        assert (reply.usage.input_tokens, reply.usage.output_tokens) == (20, 7)
        assert reply.usage.cache_read_tokens == 8
        reply = c.complete(MESSAGES, TOOLS, stream=stream, callbacks=callbacks)
        assert [(t.name, json.loads(t.arguments)) for t in reply.tool_calls] == [
            ("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})]
        assert all(t.id for t in reply.tool_calls)
        assert llm.requests[0].tool_names == ["read_file"]
        assert all(r.stream is stream for r in llm.requests)
    if stream:
        assert "".join(pieces) == "Hello there"
        assert started == ["read_file", "read_file"]


PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJ"
         "RU5ErkJggg==")
"""A 1x1 PNG, base64: what an MCP tool's image becomes in a user message's parts."""


@pytest.mark.parametrize("mode", list(MODES))
def test_an_image_in_a_user_message_reaches_the_endpoint_in_every_mode(mode: str) -> None:
    shown = [{"type": "text", "text": "[Images returned by a tool above]"},
             {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}]
    messages = [*MESSAGES, {"role": "user", "content": shown}]
    with FakeLLM([Reply(text="a dot")]) as llm:
        assert client(llm, mode).complete(messages).content == "a dot"
    sent = json.dumps(llm.requests[0].body)
    assert PIXEL in sent and "[Images returned by a tool above]" in sent
    if mode == "responses":  # the Responses API's own part types, not chat's
        *_, last = llm.requests[0].body["input"]
        assert [part["type"] for part in last["content"]] == ["input_text", "input_image"]


def test_cost_is_known_for_priced_models_and_unknown_otherwise() -> None:
    with FakeLLM([Reply(text="a"), Reply(text="b")]) as llm:
        priced = client(llm).complete(MESSAGES)
        settings = client(llm).settings.model_copy(update={"model": "my-private-model"})
        unpriced = LiteLLMClient(settings).complete(MESSAGES)
    assert priced.usage.cost_usd is not None and priced.usage.cost_usd > 0
    assert unpriced.usage.cost_usd is None


def test_anthropic_requests_carry_cache_breakpoints_without_touching_the_input() -> None:
    messages = [{"role": "system", "content": "sys"}] + [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(6)]
    before = json.dumps(messages)
    with FakeLLM([Reply(text="ok")]) as llm:
        client(llm, "anthropic_messages").complete(messages)
        body = llm.requests[0].body
    assert json.dumps(messages) == before
    system = body["system"]
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    marked = [m for m in body["messages"]
              if any(isinstance(p, dict) and "cache_control" in p for p in m["content"])]
    assert len(marked) == 3 and marked[-1] is body["messages"][-1]


def test_cache_breakpoints_mark_system_and_last_three() -> None:
    messages = [{"role": "system", "content": "s"}] + [
        {"role": "user", "content": str(i)} for i in range(5)]
    marked = with_cache_breakpoints(messages)
    flags = [isinstance(m["content"], list) for m in marked]
    assert flags == [True, False, False, True, True, True]
    assert all(isinstance(m["content"], str) for m in messages)


@pytest.mark.parametrize(("fault", "expected"), [
    (Fault.rate_limit(retry_after=0), "ok"),
    (Fault.server_error(), "ok"),
    (Fault.overloaded(), "ok"),
    (Truncated(), "ok"),
])
def test_retryable_faults_are_retried(fault, expected: str) -> None:
    with FakeLLM([fault, Reply(text=expected)]) as llm:
        reply = client(llm).complete(MESSAGES, stream=isinstance(fault, Truncated))
        assert reply.content == expected and len(llm.requests) == 2


def test_timeouts_are_retried() -> None:
    with FakeLLM([Reply(text="slow", delay=3), Reply(text="fast")]) as llm:
        settings = client(llm).settings.model_copy(update={"timeout": 0.5})
        assert LiteLLMClient(settings).complete(MESSAGES).content == "fast"


@pytest.mark.parametrize(("fault", "kind"), [
    (Fault.authentication(), ErrorClass.AUTH),
    (Fault.payment_required(), ErrorClass.BILLING),
    (Fault.model_not_found(), ErrorClass.MODEL_NOT_FOUND),
])
def test_non_retryable_faults_fail_at_once(fault, kind: ErrorClass) -> None:
    with FakeLLM([fault]) as llm:
        with pytest.raises(ModelCallError) as info:
            client(llm).complete(MESSAGES)
        assert info.value.error_class is kind and len(llm.requests) == 1


def test_an_unreachable_endpoint_is_named_with_the_fix_and_fails_fast() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound but not listening: connections are refused
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        settings = ProviderConfig(name="custom", provider="openai", model="gpt-4o",
                                  api_base=url, api_key="sk-test", api_mode="chat_completions",
                                  timeout=5, max_retries=2, retry_backoff=30.0)
        waits: list[float] = []
        with pytest.raises(ModelCallError) as info:
            LiteLLMClient(settings, sleep=waits.append).complete(MESSAGES)
    assert info.value.error_class is ErrorClass.CONNECTION
    assert str(info.value) == (
        f"cannot reach the model endpoint {url} (connection refused) — check "
        "`hermes config get provider.api_base` and run `hermes doctor`")
    assert len(waits) == 2 and max(waits) <= 0.25  # the configured retries, short waits


def test_connect_failures_are_found_under_generic_errors() -> None:
    def raised(cause: BaseException) -> BaseException:
        try:
            try:
                raise cause
            except OSError as exc:
                raise RuntimeError("Connection error.") from exc
        except RuntimeError as outer:
            return outer

    unknown_host = raised(socket.gaierror(-2, "Name or service not known"))
    assert classify(unknown_host) is ErrorClass.CONNECTION
    assert connect_failure(unknown_host) == "name or service not known"
    assert connect_failure(raised(OSError("disk full"))) is None


def test_persistent_failure_falls_back_in_order() -> None:
    script = [Fault.server_error()] * 3 + [Fault.authentication(), Reply(text="from fallback")]
    with FakeLLM(script) as llm:
        fallbacks = [FallbackConfig(provider="openai", model="gpt-4o-mini",
                                    api_base=llm.openai_base_url, api_key="sk-bad"),
                     FallbackConfig(provider="openai", model="gpt-4.1",
                                    api_base=llm.openai_base_url, api_key="sk-good")]
        reply = client(llm, fallbacks=fallbacks).complete(MESSAGES)
        assert reply.content == "from fallback"
        assert [r.model for r in llm.requests] == ["gpt-4o"] * 3 + ["gpt-4o-mini", "gpt-4.1"]


def test_context_overflow_is_raised_for_compression_not_retried() -> None:
    with FakeLLM([Fault.context_length_exceeded()]) as llm:
        with pytest.raises(ContextOverflowError):
            client(llm, fallbacks=[FallbackConfig(provider="openai", model="x",
                                                  api_base=llm.openai_base_url)]).complete(MESSAGES)
        assert len(llm.requests) == 1


def test_stream_error_mid_way_is_retried() -> None:
    with FakeLLM([StreamError(), Reply(text="second try")]) as llm:
        assert client(llm).complete(MESSAGES, stream=True).content == "second try"


def test_cancelled_stream_stops() -> None:
    from hermes.models.errors import CallCancelledError

    with FakeLLM([Reply(text="a long answer " * 50)]) as llm, pytest.raises(CallCancelledError):
        client(llm).complete(MESSAGES, stream=True,
                             callbacks=StreamCallbacks(cancelled=lambda: True))


@pytest.mark.parametrize(("provider", "model", "base", "expected"), [
    ("anthropic", "claude-sonnet-4-5", None, "anthropic_messages"),
    ("openrouter", "anthropic/claude-sonnet-4.5", None, "chat_completions"),
    ("openai", "claude-3-haiku", None, "anthropic_messages"),
    ("openai", "x", "https://api.anthropic.com/v1", "anthropic_messages"),
    ("bedrock", "anthropic.claude-v2", None, "bedrock_converse"),
    ("openai", "gpt-5-codex", None, "responses"),
    ("openai", "gpt-4o", None, "chat_completions"),
])
def test_api_mode_detection(provider: str, model: str, base: str | None, expected: str) -> None:
    settings = ProviderConfig(name="t", provider=provider, model=model, api_base=base)
    assert detect_api_mode(settings) == expected


# -- Bedrock Converse: SigV4 with explicit fake keys, against the fake's Bedrock wire --------

BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


@pytest.fixture
def aws(tmp_path):
    """No AWS files, variables or network for botocore; fails if litellm tried to reach AWS.

    Garbage collection waits for teardown: a stream abandoned after a mid-stream error and
    finalized during the retry's request would deadlock httpcore (see ``deferred_gc``).
    """
    from fakellm.bedrock import aws_sandbox, deferred_gc

    with aws_sandbox(tmp_path) as refused, deferred_gc():
        yield
    assert refused == []


def bedrock_client(llm: FakeLLM, **settings) -> LiteLLMClient:
    from fakellm.bedrock import FAKE_AWS_CREDENTIALS

    config = {"name": "test", "provider": "bedrock", "model": BEDROCK_MODEL,
              "api_mode": "bedrock_converse", "api_base": llm.bedrock_base_url,
              "extra": dict(FAKE_AWS_CREDENTIALS), "timeout": 5, "max_retries": 2,
              "retry_backoff": 0.0} | settings
    return LiteLLMClient(ProviderConfig(**config))


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize("stream", [False, True])
def test_bedrock_text_and_tool_calls(stream: bool) -> None:
    script = [Reply(text="Hello there", usage=Usage(input_tokens=20, output_tokens=7,
                                                    cached_tokens=8, cache_write_tokens=4)),
              Reply(tool_calls=[ToolCall("read_file", {"path": "a.txt"}, id="tooluse_1"),
                                ToolCall("read_file", {"path": "b.txt"})])]
    pieces: list[str] = []
    started: list[str] = []
    callbacks = StreamCallbacks(on_text=pieces.append,
                                on_tool_call=lambda i, name: started.append(name))
    with FakeLLM(script) as llm:
        c = bedrock_client(llm)
        reply = c.complete(MESSAGES, TOOLS, stream=stream, callbacks=callbacks)
        assert (reply.content, reply.tool_calls, reply.finish_reason) == ("Hello there", (), "stop")
        usage = reply.usage
        assert (usage.input_tokens, usage.output_tokens) == (20, 7)
        assert (usage.cache_read_tokens, usage.cache_write_tokens) == (8, 4)
        assert usage.cost_usd is not None and usage.cost_usd > 0
        assert reply.model == f"bedrock/converse/{BEDROCK_MODEL}"
        reply = c.complete(MESSAGES, TOOLS, stream=stream, callbacks=callbacks)
        assert [(t.name, json.loads(t.arguments)) for t in reply.tool_calls] == [
            ("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})]
        assert reply.tool_calls[0].id == "tooluse_1" and reply.tool_calls[1].id
        assert reply.finish_reason == "tool_calls"
        first = llm.requests[0]
        assert (first.wire, first.model, first.tool_names) == ("bedrock", BEDROCK_MODEL,
                                                               ["read_file"])
        assert first.body["system"] == [{"text": "be brief"}]
        assert all(r.stream is stream for r in llm.requests)
        assert all(r.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDFAKE/")
                   for r in llm.requests)
    if stream:
        assert "".join(pieces) == "Hello there"
        assert started == ["read_file", "read_file"]


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize(("fault", "stream"), [
    (Fault.rate_limit(retry_after=None), False),
    (Fault.overloaded(), False),
    (Fault.server_error(), True),
    (StreamError(Fault.rate_limit(retry_after=None)), True),
    (Truncated(), True),
    (Truncated(), False),
], ids=["throttled", "unavailable", "internal", "throttled-mid-stream", "cut-stream", "cut-body"])
def test_bedrock_retryable_fault_then_success(fault, stream: bool) -> None:
    with FakeLLM([fault, Reply(text="second try")]) as llm:
        assert bedrock_client(llm).complete(MESSAGES, stream=stream).content == "second try"
        assert len(llm.requests) == 2


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize("stream", [False, True])
def test_bedrock_context_overflow_is_raised_for_compression(stream: bool) -> None:
    with FakeLLM([Fault.context_length_exceeded()]) as llm:
        with pytest.raises(ContextOverflowError) as info:
            bedrock_client(llm).complete(MESSAGES, stream=stream)
        assert len(llm.requests) == 1
    assert "Input is too long for requested model" in str(info.value)


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize(("fault", "kind"), [
    (Fault.rate_limit(retry_after=None), ErrorClass.RATE_LIMIT),
    (Fault(429, "Too many tokens, please wait before trying again."), ErrorClass.RATE_LIMIT),
    (Fault.server_error(), ErrorClass.OVERLOADED),  # litellm reports Bedrock's 500 as a 503
    (Fault.unavailable(), ErrorClass.OVERLOADED),
    (Fault.authentication(), ErrorClass.AUTH),
    (Fault(403, "You don't have access to the model with the specified model ID."),
     ErrorClass.AUTH),
    (Fault.payment_required(), ErrorClass.AUTH),  # Bedrock's AccessDeniedException
    (Fault.model_not_found(), ErrorClass.MODEL_NOT_FOUND),
    (Fault(400, "Malformed input request: #: required key [messages] not found"),
     ErrorClass.FORMAT_ERROR),
    (Fault(408, "Model has timed out in processing the request."), ErrorClass.TIMEOUT),
], ids=["throttling", "token-throttling", "internal", "unavailable", "unrecognized-client",
        "access-denied", "payment", "not-found", "validation", "model-timeout"])
def test_bedrock_errors_are_classified(fault: Fault, kind: ErrorClass) -> None:
    with FakeLLM([fault]) as llm:
        with pytest.raises(ModelCallError) as info:
            bedrock_client(llm, max_retries=0).complete(MESSAGES)
        assert info.value.error_class is kind
