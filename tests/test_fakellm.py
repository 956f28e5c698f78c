"""The fake LLM server, driven by litellm's real HTTP stack in all three wire formats.

Every call passes api_key, api_base, num_retries=0 and a short timeout explicitly.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fakellm import (
    FakeLLM,
    FakeLLMError,
    Fault,
    RecordedRequest,
    Reply,
    StreamError,
    ToolCall,
    Truncated,
    Usage,
    turn_from_json,
)


@pytest.fixture(autouse=True)
def _no_collection_mid_test() -> Iterator[None]:
    """These tests call litellm directly (without our client's collect between retries):
    keep the collector from finalizing an abandoned stream inside httpcore's pool lock."""
    from fakellm.bedrock import deferred_gc

    with deferred_gc():
        yield

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm: no network

import httpx  # noqa: E402
import litellm  # noqa: E402
from litellm.exceptions import MidStreamFallbackError  # noqa: E402

pytest_plugins = ["fakellm.pytest_plugin"]  # the fake_llm fixture

REPO = Path(__file__).resolve().parent.parent
WIRES = ["openai", "anthropic", "responses"]
MODELS = {"openai": "openai/gpt-4o", "anthropic": "anthropic/claude-sonnet-4-5",
          "responses": "openai/gpt-4o"}
HI = [{"role": "user", "content": "hi"}]
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


@dataclass
class Answer:
    """What a client got back, read the same way from every wire format."""

    text: str | None = None
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, arguments)
    reasoning: str | None = None
    finish: str | None = None
    tokens: tuple[int, int, int, int] = (0, 0, 0, 0)  # prompt, completion, cached, reasoning
    argument_fragments: int = 0  # streamed tool-argument pieces seen


def call(llm: FakeLLM, wire: str, *, stream: bool = False, timeout: float = 5.0,
         **kwargs: Any) -> Any:
    common = {"api_base": llm.api_base(wire), "api_key": "sk-test", "num_retries": 0,
              "timeout": timeout, "stream": stream}
    if wire == "responses":
        kwargs.setdefault("input", "hi")
        if "tools" in kwargs:
            kwargs["tools"] = [{"type": "function", **t["function"]} for t in kwargs["tools"]]
        return litellm.responses(model=MODELS[wire], **common, **kwargs)
    return litellm.completion(model=MODELS[wire], messages=kwargs.pop("messages", HI),
                              **common, **kwargs)


def ask(llm: FakeLLM, wire: str, *, stream: bool = False, **kwargs: Any) -> Answer:
    result = call(llm, wire, stream=stream, **kwargs)
    if wire == "responses":
        return read_response_events(list(result)) if stream else read_response(result)
    return read_chunks(list(result)) if stream else read_completion(result)


def chat_tokens(usage: Any) -> tuple[int, int, int, int]:
    cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else 0
    details = usage.completion_tokens_details
    return (usage.prompt_tokens, usage.completion_tokens, cached or 0,
            (details.reasoning_tokens or 0) if details else 0)


def read_completion(response: Any) -> Answer:
    message = response.choices[0].message
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    return Answer(message.content, calls, getattr(message, "reasoning_content", None),
                  response.choices[0].finish_reason, chat_tokens(response.usage))


def read_chunks(chunks: list[Any]) -> Answer:
    """Assemble the deltas by hand (tool arguments arrive in fragments), usage via litellm."""
    text, reasoning, finish = "", "", None
    calls: dict[int, list[str]] = {}
    fragments = 0
    for chunk in chunks:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text += delta.content or ""
        reasoning += getattr(delta, "reasoning_content", None) or ""
        finish = chunk.choices[0].finish_reason or finish
        for tool in delta.tool_calls or []:
            entry = calls.setdefault(tool.index, ["", "", ""])
            entry[0] = tool.id or entry[0]
            entry[1] = tool.function.name or entry[1]
            entry[2] += tool.function.arguments or ""
            fragments += bool(tool.function.arguments)
    built: Any = litellm.stream_chunk_builder(chunks)
    return Answer(text or None, [(i, n, a) for i, n, a in calls.values()], reasoning or None,
                  finish, chat_tokens(built.usage), fragments)


def responses_tokens(usage: Any) -> tuple[int, int, int, int]:
    return (usage.input_tokens, usage.output_tokens, usage.input_tokens_details.cached_tokens,
            usage.output_tokens_details.reasoning_tokens)


def read_response(response: Any) -> Answer:
    answer = Answer(finish=response.status, tokens=responses_tokens(response.usage))
    for item in response.output:
        if item.type == "message":
            answer.text = item.content[0].text
        elif item.type == "function_call":
            answer.calls.append((item.call_id, item.name, item.arguments))
        elif item.type == "reasoning":
            answer.reasoning = item.summary[0].text
    return answer


def read_response_events(events: list[Any]) -> Answer:
    """Assemble text and arguments from the delta events; status and usage from the last."""
    final = read_response(events[-1].response)
    text, reasoning, fragments = "", "", 0
    arguments: dict[str, str] = {}
    for event in events:
        kind = str(getattr(event.type, "value", event.type))
        if kind == "response.output_text.delta":
            text += event.delta
        elif kind == "response.reasoning_summary_text.delta":
            reasoning += event.delta
        elif kind == "response.function_call_arguments.delta":
            arguments[event.item_id] = arguments.get(event.item_id, "") + event.delta
            fragments += 1
    streamed = list(arguments.values())
    calls = [(i, n, streamed[k]) for k, (i, n, _) in enumerate(final.calls)]
    return Answer(text or None, calls, reasoning or None, final.finish, final.tokens, fragments)


# -- replies ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", WIRES)
def test_text_reply(wire: str, stream: bool) -> None:
    with FakeLLM([Reply(text="Hello from the fake model, in several chunks.")]) as llm:
        answer = ask(llm, wire, stream=stream)
    assert answer.text == "Hello from the fake model, in several chunks."
    assert answer.finish == {"responses": "completed"}.get(wire, "stop")
    assert answer.calls == []


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", WIRES)
def test_tool_calls_arrive_whole(wire: str, stream: bool) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris", "note": "ünïcode, and a long value"},
                      id="call_given"),
             ToolCall("get_weather", {"city": "Oslo"})]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
    with FakeLLM([Reply(text="Checking.", tool_calls=calls)]) as llm:
        answer = ask(llm, wire, stream=stream, tools=tools)
    assert [(name, json.loads(args)) for _, name, args in answer.calls] == [
        ("get_weather", {"city": "Paris", "note": "ünïcode, and a long value"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert answer.calls[0][0] == "call_given"
    assert answer.calls[1][0]  # generated
    assert answer.finish == {"responses": "completed"}.get(wire, "tool_calls")
    if stream:  # the arguments really were split across several chunks
        assert answer.argument_fragments > len(calls)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", ["openai", "responses"])
def test_malformed_arguments_arrive_verbatim(wire: str, stream: bool) -> None:
    raw = '{"city": "Par'
    with FakeLLM([Reply(tool_calls=[ToolCall("get_weather", raw)])]) as llm:
        answer = ask(llm, wire, stream=stream)
    assert answer.calls[0][1:] == ("get_weather", raw)


def test_malformed_arguments_anthropic() -> None:
    """Anthropic sends ``input`` as an object, so only a stream can carry broken JSON.

    Non-streaming, the raw string is sent as ``input`` and litellm JSON-encodes it again.
    """
    raw = '{"city": "Par'
    with FakeLLM([Reply(tool_calls=[ToolCall("get_weather", raw)])] * 2) as llm:
        streamed = ask(llm, "anthropic", stream=True)
        plain = ask(llm, "anthropic")
    assert streamed.calls[0][1:] == ("get_weather", raw)
    assert json.loads(plain.calls[0][2]) == raw


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", WIRES)
def test_usage_reaches_litellm(wire: str, stream: bool) -> None:
    usage = Usage(input_tokens=1200, output_tokens=80, cached_tokens=1000,
                  cache_write_tokens=100 if wire == "anthropic" else 0, reasoning_tokens=30)
    with FakeLLM([Reply(text="ok", usage=usage)]) as llm:
        options = {"stream_options": {"include_usage": True}} if stream and wire == "openai" else {}
        answer = ask(llm, wire, stream=stream, **options)
    prompt, completion, cached, reasoning = answer.tokens
    assert (prompt, completion, cached) == (1200, 80, 1000)
    if wire != "anthropic":  # litellm estimates Anthropic's reasoning tokens from the text
        assert reasoning == 30


def test_anthropic_cache_write_tokens() -> None:
    with FakeLLM([Reply(text="ok", usage=Usage(500, 10, cached_tokens=300,
                                               cache_write_tokens=150))]) as llm:
        usage = call(llm, "anthropic").usage
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (300, 150)
    assert usage.prompt_tokens == 500


def test_openai_stream_without_include_usage_is_estimated_by_litellm() -> None:
    with FakeLLM([Reply(text="ok", usage=Usage(1200, 80))]) as llm:
        answer = ask(llm, "openai", stream=True)
        assert "stream_options" not in llm.requests[0].body  # litellm does not add it
    assert answer.tokens[0] != 1200  # litellm counted the prompt itself


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", WIRES)
def test_reasoning_text(wire: str, stream: bool) -> None:
    with FakeLLM([Reply(text="42", reasoning="Six times seven is forty-two.")]) as llm:
        answer = ask(llm, wire, stream=stream)
    assert (answer.text, answer.reasoning) == ("42", "Six times seven is forty-two.")


@pytest.mark.parametrize("wire", WIRES)
def test_max_tokens_reached(wire: str) -> None:
    with FakeLLM([Reply(text="cut", max_tokens_reached=True)] * 2) as llm:
        plain, streamed = ask(llm, wire), ask(llm, wire, stream=True)
    expected = {"responses": "incomplete"}.get(wire, "length")
    assert plain.finish == streamed.finish == expected


# -- faults -------------------------------------------------------------------------------

E = litellm
FAULTS: dict[str, dict[str, type[Exception]]] = {
    # fault: expected litellm exception, per wire (openai, anthropic, responses)
    "rate_limit": dict.fromkeys(WIRES, E.RateLimitError),
    "server_error": dict.fromkeys(WIRES, E.InternalServerError),
    "unavailable": dict.fromkeys(WIRES, E.ServiceUnavailableError),
    "overloaded": {"openai": E.APIError, "anthropic": E.InternalServerError,
                   "responses": E.APIError},
    "authentication": dict.fromkeys(WIRES, E.AuthenticationError),
    "payment_required": {"openai": E.APIError, "anthropic": E.BadRequestError,
                         "responses": E.APIError},
    "model_not_found": dict.fromkeys(WIRES, E.NotFoundError),
    # The Responses API words it "Your input exceeds the context window"; litellm
    # classifies by message text and does not recognise that phrase.
    "context_length_exceeded": {"openai": E.ContextWindowExceededError,
                                "anthropic": E.ContextWindowExceededError,
                                "responses": E.BadRequestError},
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_maps_to_litellm_exception(fault: str, wire: str, stream: bool) -> None:
    scripted: Fault = getattr(Fault, fault)()
    with FakeLLM([scripted]) as llm:
        with pytest.raises(Exception) as raised:
            ask(llm, wire, stream=stream)
        assert len(llm.requests) == 1  # no hidden retries
    assert raised.type is FAULTS[fault][wire]
    # litellm reports Anthropic's 529 as a 500 InternalServerError
    status = 500 if (fault, wire) == ("overloaded", "anthropic") else scripted.status
    assert getattr(raised.value, "status_code", None) == status
    if wire == "responses" and fault == "context_length_exceeded":
        assert "context_length_exceeded" in str(raised.value)


def test_retry_after_is_exposed_on_the_exception() -> None:
    with FakeLLM([Fault.rate_limit(retry_after=7)]) as llm, \
            pytest.raises(litellm.RateLimitError) as raised:
        ask(llm, "anthropic")
    headers = getattr(raised.value, "litellm_response_headers", {})
    assert headers["retry-after"] == "7"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire", WIRES)
def test_delay_trips_the_client_timeout_and_not_shutdown(wire: str, stream: bool) -> None:
    llm = FakeLLM([Reply(text="too late", delay=30)]).start()
    try:
        with pytest.raises(litellm.Timeout):
            ask(llm, wire, stream=stream, timeout=0.3)
    finally:
        started = time.monotonic()
        llm.close()
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_truncated_stream_raises_mid_stream_error_after_partial_chunks(wire: str) -> None:
    """Chat completions: the chunks before the cut arrive, then MidStreamFallbackError
    (a ServiceUnavailableError) carrying the text generated so far."""
    chunks: list[Any] = []
    turn = Truncated(Reply(text="This answer is cut off mid-way"), after_events=5)
    with FakeLLM([turn]) as llm, pytest.raises(MidStreamFallbackError) as raised:
        chunks.extend(call(llm, wire, stream=True))
    assert isinstance(raised.value, litellm.ServiceUnavailableError)
    assert "peer closed connection" in str(raised.value)
    assert chunks and "This answer is cut off mid-way".startswith(raised.value.generated_content)
    assert raised.value.generated_content


def test_truncated_responses_stream_raises_unmapped_httpx_error() -> None:
    """litellm does not map transport errors in a Responses stream: httpx's error escapes."""
    events: list[Any] = []
    with FakeLLM([Truncated(after_events=4)]) as llm, pytest.raises(httpx.RemoteProtocolError):
        events.extend(call(llm, "responses", stream=True))
    assert len(events) == 4


@pytest.mark.parametrize("wire", WIRES)
def test_truncated_body_raises_internal_server_error(wire: str) -> None:
    with FakeLLM([Truncated()]) as llm, pytest.raises(litellm.InternalServerError):
        call(llm, wire)


@pytest.mark.parametrize("wire", WIRES)
def test_in_stream_error_event(wire: str) -> None:
    turn = StreamError(Fault.rate_limit(), after_events=4)
    with FakeLLM([turn]) as llm, pytest.raises(MidStreamFallbackError) as raised:
        list(call(llm, wire, stream=True))
    assert "Rate limit reached" in str(raised.value)


def test_script_exhausted_fails_loudly() -> None:
    with FakeLLM([], strict=False) as llm, \
            pytest.raises(litellm.InternalServerError, match="fake LLM: script exhausted"):
        call(llm, "openai")
    assert llm.problems and "script exhausted" in llm.problems[0]
    with pytest.raises(FakeLLMError, match="script exhausted"), FakeLLM() as strict, \
            pytest.raises(litellm.InternalServerError):
        call(strict, "anthropic")


def test_unknown_path_is_a_404_and_a_problem() -> None:
    with FakeLLM(strict=False) as llm:
        request = urllib.request.Request(f"{llm.url}/v1/v1/messages", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=5)
        raised.value.close()
    assert raised.value.code == 404
    assert "no route for POST /v1/v1/messages" in llm.problems[0]


def test_failing_responder_is_reported() -> None:
    def broken(request: RecordedRequest) -> Reply:
        raise KeyError("oops")

    with FakeLLM([broken], strict=False) as llm, pytest.raises(litellm.InternalServerError):
        call(llm, "openai")
    assert "responder failed: KeyError('oops')" in llm.problems[0]


# -- recording and responders -------------------------------------------------------------


def test_records_anthropic_cache_control_tools_model_and_key() -> None:
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
    with FakeLLM([Reply(text="ok")]) as llm:
        call(llm, "anthropic", messages=[{"role": "system", "content": system}, *HI], tools=tools)
        (request,) = llm.requests
    assert (request.method, request.path, request.wire) == ("POST", "/v1/messages", "anthropic")
    assert request.model == "claude-sonnet-4-5"
    assert request.body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert request.body["tools"][0]["input_schema"] == WEATHER
    assert request.tool_names == ["get_weather"]
    assert request.headers["x-api-key"] == "sk-test"
    assert "sk-test" not in repr(request)


def conversation(wire: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"input" if wire == "responses" else "messages": items}


def tool_round_trip(wire: str, call_id: str, name: str, arguments: str,
                    output: str) -> list[dict[str, Any]]:
    """The assistant's tool call and the tool's result, as the client sends them back."""
    if wire == "responses":
        return [{"type": "function_call", "call_id": call_id, "name": name,
                 "arguments": arguments},
                {"type": "function_call_output", "call_id": call_id, "output": output}]
    return [{"role": "assistant", "content": None,
             "tool_calls": [{"id": call_id, "type": "function",
                             "function": {"name": name, "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call_id, "content": output}]


@pytest.mark.parametrize("wire", WIRES)
def test_tool_loop_driven_by_a_responder(wire: str) -> None:
    """A responder reads the conversation: call a tool first, answer once it has a result."""

    def agent_model(request: RecordedRequest) -> Reply:
        if not request.tool_results:
            return Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"}, id="call_1")])
        (result,) = request.tool_results
        return Reply(text=f"{request.last_user_text}: {result.content} ({result.call_id})")

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
    question: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
    with FakeLLM(fallback=agent_model) as llm:
        first = ask(llm, wire, tools=tools, **conversation(wire, question))
        history = question + tool_round_trip(wire, *first.calls[0], output="sunny")
        second = ask(llm, wire, tools=tools, **conversation(wire, history))
    assert second.text == "Weather?: sunny (call_1)"
    assert llm.requests[1].tool_names == ["get_weather"]


def test_concurrent_requests_push_and_wait() -> None:
    with FakeLLM([Reply(text="first")], fallback=lambda r: Reply(text="later")) as llm:
        llm.push(Reply(text="second"))
        texts: list[str | None] = []
        workers = [threading.Thread(target=lambda: texts.append(ask(llm, "openai").text))
                   for _ in range(8)]
        for worker in workers:
            worker.start()
        assert len(llm.wait_for_requests(8, timeout=10)) == 8
        for worker in workers:
            worker.join(timeout=10)
        assert llm.pending == 0
    assert sorted(texts, key=str) == sorted(["first", "second"] + ["later"] * 6)
    assert [r.index for r in llm.requests] == list(range(8))
    with pytest.raises(TimeoutError):
        llm.wait_for_requests(9, timeout=0.01)


def test_async_clients_stream_tool_calls() -> None:
    async def both() -> list[Answer]:
        answers = []
        for wire in ("openai", "anthropic"):
            stream = await litellm.acompletion(
                model=MODELS[wire], messages=HI, api_base=llm.api_base(wire), api_key="sk-test",
                num_retries=0, timeout=5, stream=True)
            answers.append(read_chunks([chunk async for chunk in stream]))
        return answers

    reply = Reply(tool_calls=[ToolCall("get_weather", {"city": "Rome"})])
    with FakeLLM([reply, reply]) as llm:
        answers = asyncio.run(both())
    assert [json.loads(a.calls[0][2]) for a in answers] == [{"city": "Rome"}] * 2


def server_threads() -> list[threading.Thread]:
    """The fake's threads: its serving thread and its handler threads (never daemons,
    unlike those of other tests' servers that may still be winding down)."""
    return [t for t in threading.enumerate()
            if t.name == "fakellm" or ("process_request_thread" in t.name and not t.daemon)]


def test_close_leaves_no_threads_or_open_port() -> None:
    with FakeLLM([Reply(text="a"), Reply(text="b")]) as llm:
        ask(llm, "openai")
        ask(llm, "anthropic")  # litellm keeps both keep-alive connections pooled
        assert server_threads()
        url = llm.url
        started = time.monotonic()
    assert time.monotonic() - started < 2
    assert server_threads() == []
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=1)


def test_fixture_starts_empty_and_checks_on_teardown(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="pushed"))
    assert ask(fake_llm, "anthropic").text == "pushed"
    assert fake_llm.pending == 0


def test_json_turns() -> None:
    assert turn_from_json({"fault": "rate_limit", "retry_after": 3}) == Fault.rate_limit(3)
    turn = turn_from_json({"truncated": {"text": "x"}, "after_events": 2})
    assert turn == Truncated(Reply(text="x"), 2)
    turn = turn_from_json({"text": "t", "tool_calls": [{"name": "f", "arguments": "{"}],
                           "usage": {"input_tokens": 3, "output_tokens": 2}})
    assert turn == Reply(text="t", tool_calls=(ToolCall("f", "{"),), usage=Usage(3, 2))
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        turn_from_json({"fault": "nope"})


def test_standalone_process(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "from a subprocess"}],
                                  "fallback": {"fault": "unavailable"}}))
    process = subprocess.Popen([sys.executable, "-m", "tests.fakellm", "--port", "0",
                                "--script", str(script)], cwd=REPO, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        base = f"http://127.0.0.1:{port}/v1"
        reply = litellm.completion(model="openai/gpt-4o", messages=HI, api_base=base,
                                   api_key="sk-test", num_retries=0, timeout=5)
        assert reply.choices[0].message.content == "from a subprocess"
        with pytest.raises(litellm.ServiceUnavailableError):
            litellm.completion(model="openai/gpt-4o", messages=HI, api_base=base,
                               api_key="sk-test", num_retries=0, timeout=5)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr
    assert "served 2 requests" in stderr
