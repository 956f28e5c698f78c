"""OpenAI-compatible endpoints of the user's own are spoken to directly (``openai_wire``),
against the fake LLM on loopback: the same replies, errors, retries and prices as
through litellm, without importing litellm; everything else still goes through it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from fakellm import FakeLLM, Fault, Reply, StreamError, ToolCall, Usage
from hermes.config.schema import FallbackConfig, ProviderConfig
from hermes.models.errors import ErrorClass, ModelCallError
from hermes.models.litellm_client import LiteLLMClient
from hermes.models.types import StreamCallbacks

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]


def settings(base: str, **fields) -> ProviderConfig:
    return ProviderConfig(**{"name": "custom", "provider": "openai", "model": "gpt-4o",
                             "api_base": base, "api_key": "sk-test",
                             "api_mode": "chat_completions", "timeout": 5, "max_retries": 2,
                             "retry_backoff": 0.0, **fields})


def in_fresh_python(code: str) -> dict:
    """Run ``code`` (which prints one JSON line) in a new interpreter: what it imported
    is its own."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_turn_at_an_endpoint_of_ones_own_never_imports_litellm() -> None:
    script = [Reply(tool_calls=[ToolCall("read_file", {"path": "a.txt"}, id="call_1")],
                    usage=Usage(input_tokens=10, output_tokens=5)),
              Reply(text="done", reasoning="looked", usage=Usage(input_tokens=10,
                                                                 output_tokens=5))]
    with FakeLLM(script) as llm:
        seen = in_fresh_python(f"""
            import json, sys
            from hermes.config.schema import ProviderConfig
            from hermes.models.litellm_client import LiteLLMClient
            from hermes.models.types import StreamCallbacks
            from hermes.agent.tokens import context_window
            client = LiteLLMClient(ProviderConfig(
                name="custom", provider="openai", model="gpt-4o", api_base={llm.openai_base_url!r},
                api_key="sk-test", api_mode="chat_completions"))
            pieces = []
            first = client.complete({MESSAGES!r}, {TOOLS!r}, stream=True,
                                    callbacks=StreamCallbacks(on_reasoning=pieces.append))
            second = client.complete({MESSAGES!r}, {TOOLS!r})
            print(json.dumps({{
                "litellm": "litellm" in sys.modules, "openai": "openai" in sys.modules,
                "calls": [[c.name, c.arguments] for c in first.tool_calls],
                "finish": [first.finish_reason, second.finish_reason],
                "text": second.content, "reasoning": second.reasoning,
                "cost": first.usage.cost_usd, "window": context_window(client),
                "images": client.takes_images()}}))
        """)
    assert seen["litellm"] is False and seen["openai"] is False
    assert [[name, json.loads(arguments)] for name, arguments in seen["calls"]] == [
        ["read_file", {"path": "a.txt"}]]
    assert seen["finish"] == ["tool_calls", "stop"]
    assert (seen["text"], seen["reasoning"]) == ("done", "looked")
    assert seen["cost"] == pytest.approx(10 * 2.5e-6 + 5 * 1e-5)  # gpt-4o's listed price
    assert (seen["window"], seen["images"]) == (128000, True)
    first, second = llm.requests
    assert first.body["model"] == "gpt-4o" and first.body["stream"] is True
    assert first.body["stream_options"] == {"include_usage": True}
    assert first.headers["authorization"] == "Bearer sk-test"
    assert "stream" not in second.body and second.tool_names == ["read_file"]


def test_plain_parameters_headers_and_body_reach_the_endpoint() -> None:
    extra = {"temperature": 0.2, "extra_headers": {"X-Team": "blue"},
             "extra_body": {"top_k": 5}}
    with FakeLLM([Reply(text="ok")]) as llm:
        client = LiteLLMClient(settings(llm.openai_base_url, api_key=None, extra=extra))
        assert not client.needs_litellm()
        assert client.complete(MESSAGES, max_tokens=7).content == "ok"
    sent = llm.requests[0]
    assert sent.body["temperature"] == 0.2 and sent.body["top_k"] == 5
    assert sent.body["max_tokens"] == 7 and sent.headers["x-team"] == "blue"
    assert "authorization" not in sent.headers  # no key: none sent
    assert "extra_headers" not in sent.body and "extra_body" not in sent.body


@pytest.mark.parametrize(("fields", "why"), [
    ({"extra": {"drop_params": True}}, "a litellm parameter"),
    ({"api_base": "https://api.openai.com/v1"}, "OpenAI's own endpoint"),
    ({"api_mode": "responses"}, "another wire format"),
    ({"provider": "openrouter"}, "a provider litellm adapts requests for"),
    ({"fallbacks": [FallbackConfig(provider="anthropic", model="claude-sonnet-4-5")]},
     "a fallback through litellm"),
])
def test_anything_else_goes_through_litellm(fields: dict, why: str) -> None:
    assert LiteLLMClient(settings("http://127.0.0.1:9/v1").model_copy(update=fields)) \
        .needs_litellm(), why


def test_an_unpriced_model_costs_nothing_known_and_has_the_default_window() -> None:
    from hermes.agent.tokens import DEFAULT_CONTEXT_WINDOW, context_window

    with FakeLLM([Reply(text="a")]) as llm:
        client = LiteLLMClient(settings(llm.openai_base_url, model="my-private-model"))
        assert client.complete(MESSAGES).usage.cost_usd is None
        assert context_window(client) == DEFAULT_CONTEXT_WINDOW
        assert client.takes_images() is False


@pytest.mark.parametrize("stream", [False, True])
def test_errors_are_classified_retried_and_fall_back_as_through_litellm(stream: bool) -> None:
    script = [Fault.rate_limit(retry_after=2), Fault.server_error(), Reply(text="from fallback")]
    waits: list[float] = []
    with FakeLLM(script) as llm:
        fallback = FallbackConfig(provider="openai", model="gpt-4.1",
                                  api_base=llm.openai_base_url, api_key="sk-good")
        client = LiteLLMClient(settings(llm.openai_base_url, max_retries=1,
                                        fallbacks=[fallback]), sleep=waits.append)
        assert client.complete(MESSAGES, stream=stream).content == "from fallback"
        assert [r.model for r in llm.requests] == ["gpt-4o", "gpt-4o", "gpt-4.1"]
        assert llm.requests[2].headers["authorization"] == "Bearer sk-good"
    assert waits[0] >= 2.0  # the server's Retry-After


@pytest.mark.parametrize(("fault", "kind"), [
    (Fault.authentication(), ErrorClass.AUTH),
    (Fault.payment_required(), ErrorClass.BILLING),
    (Fault.model_not_found(), ErrorClass.MODEL_NOT_FOUND),
    (Fault(400, "Invalid value for 'tools'.", "invalid_request_error"), ErrorClass.FORMAT_ERROR),
    (Fault.context_length_exceeded(), ErrorClass.CONTEXT_OVERFLOW),
])
def test_failures_that_retrying_cannot_mend_fail_at_once(fault: Fault, kind: ErrorClass) -> None:
    with FakeLLM([fault]) as llm:
        with pytest.raises(ModelCallError) as info:
            LiteLLMClient(settings(llm.openai_base_url)).complete(MESSAGES, stream=True)
        assert info.value.error_class is kind and len(llm.requests) == 1
    assert fault.message.split(":")[0][:30] in str(info.value)  # the endpoint's own words


def test_an_error_inside_the_stream_is_retried_and_pieces_already_shown_are_kept() -> None:
    pieces: list[str] = []
    with FakeLLM([StreamError(fault=Fault.server_error()), Reply(text="second try")]) as llm:
        reply = LiteLLMClient(settings(llm.openai_base_url)).complete(
            MESSAGES, stream=True, callbacks=StreamCallbacks(on_text=pieces.append))
    assert reply.content == "second try" and len(llm.requests) == 2
    assert "".join(pieces).endswith("second try")


def test_the_warm_server_rehearses_the_direct_path_without_litellm() -> None:
    seen = in_fresh_python("""
        import json, sys
        from hermes.config.schema import ProviderConfig
        from hermes.models.first_call import rehearse_first_call
        ran = rehearse_first_call(ProviderConfig(
            name="custom", provider="openai", model="bench", api_base="http://127.0.0.1:9/v1",
            api_mode="chat_completions"))
        print(json.dumps({"ran": ran, "litellm": "litellm" in sys.modules}))
    """)
    assert seen == {"ran": True, "litellm": False}  # port 9 (discard) was never asked


@pytest.mark.parametrize(("provider", "model", "rehearsed"), [
    ("openai", "gpt-4o", True),  # OpenAI's own endpoint: litellm's OpenAI handler
    ("groq", "llama-3.3-70b-versatile", False),  # litellm's own HTTP stack: not rehearsed
    ("openrouter", "anthropic/claude-sonnet-4.5", False),
])
def test_the_warm_servers_rehearsal_never_leaves_the_process(provider: str, model: str,
                                                             rehearsed: bool) -> None:
    """The rehearsal runs against an in-memory endpoint; a provider whose calls litellm
    makes with its own HTTP stack (not the client it is handed) is not rehearsed at all —
    it sent the warm-up, with the user's key, to the real provider before."""
    seen = in_fresh_python(f"""
        import json, socket
        def refuse(self, address):
            raise AssertionError(f"the rehearsal connected to {{address}}")
        socket.socket.connect = refuse
        from hermes.config.schema import ProviderConfig
        from hermes.models.first_call import rehearse_first_call
        ran = rehearse_first_call(ProviderConfig(
            name="p", provider={provider!r}, model={model!r}, api_key="sk-secret",
            api_mode="chat_completions"))
        print(json.dumps({{"ran": ran}}))
    """)
    assert seen == {"ran": rehearsed}
