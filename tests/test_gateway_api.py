"""The gateway's OpenAI-compatible API over real HTTP: uvicorn on loopback, the official
`openai` SDK as the client, the fake LLM behind the agent."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from fakellm import FakeLLM, RecordedRequest, Reply
from gateway_support import KEY, Gateway, configure, gateway, tool_then_answer


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=tool_then_answer("The answer is 42."), strict=False) as fake:
        yield fake


@pytest.fixture
def served(root: Path, environ: dict[str, str], llm: FakeLLM) -> Iterator[Gateway]:
    configure(root, llm.openai_base_url)
    with gateway(environ, root) as gw:
        yield gw


def client(gw: Gateway, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0, timeout=30)


def sessions(root: Path) -> list[str]:
    with sqlite3.connect(root / "state.db") as db:
        return [row[0] for row in db.execute("SELECT id FROM sessions")]


def test_completion_runs_the_agent_with_a_tool(served: Gateway, llm: FakeLLM,
                                               root: Path) -> None:
    raw = client(served).chat.completions.with_raw_response.create(
        model="default", messages=[{"role": "system", "content": "Answer in digits."},
                                   {"role": "user", "content": "what is six times seven?"}])
    reply = raw.parse()
    assert reply.choices[0].message.content == "The answer is 42."
    assert reply.choices[0].finish_reason == "stop" and reply.model == "default"
    session_id = raw.headers["x-hermes-session-id"]
    assert session_id in sessions(root)
    first, second = llm.requests[-2:]
    system = first.body["messages"][0]["content"]
    assert "Answer in digits." in system and len(system) > len("Answer in digits.") + 100
    assert second.tool_results and "todo" in str(second.body)


def test_the_session_header_continues_a_conversation(served: Gateway, llm: FakeLLM) -> None:
    api = client(served)
    first = api.chat.completions.with_raw_response.create(
        model="default", messages=[{"role": "user", "content": "remember the word okapi"}])
    session_id = first.headers["x-hermes-session-id"]
    api.chat.completions.create(model="default", messages=[{"role": "user", "content": "and?"}],
                                extra_headers={"X-Hermes-Session-Id": session_id})
    assert "okapi" in json.dumps(llm.requests[-1].body["messages"])


def test_client_history_becomes_the_sessions_history(served: Gateway, llm: FakeLLM) -> None:
    client(served).chat.completions.create(model="default", messages=[
        {"role": "user", "content": "my name is Ada"},
        {"role": "assistant", "content": "Hello Ada"},
        {"role": "user", "content": "what is my name?"}])
    texts = [m.get("content") for m in llm.requests[-1].body["messages"]]
    assert "my name is Ada" in texts and "Hello Ada" in texts


def test_streaming_with_tool_progress(served: Gateway) -> None:
    stream = client(served).chat.completions.create(
        model="default", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "stream it"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The answer is 42."
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].usage is not None
    progress = [c.model_extra.get("hermes") for c in chunks if c.model_extra]
    assert {"type": "tool_start", "tool": "todo"}.items() <= (progress[0] or {}).items()


def test_raw_sse_ends_with_done(served: Gateway) -> None:
    with httpx.stream("POST", f"{served.url}/v1/chat/completions", timeout=30,
                      headers={"Authorization": f"Bearer {KEY}"},
                      json={"model": "default", "stream": True,
                            "messages": [{"role": "user", "content": "hi"}]}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"


def test_responses_chain_with_previous_response_id(served: Gateway, llm: FakeLLM) -> None:
    api = client(served)
    first = api.responses.create(model="default", input="the secret is heron")
    assert first.output_text == "The answer is 42." and first.id.startswith("resp_")
    second = api.responses.create(model="default", input="what was the secret?",
                                  previous_response_id=first.id)
    assert "heron" in json.dumps(llm.requests[-1].body["messages"])
    assert second.previous_response_id == first.id
    fetched = api.responses.retrieve(first.id)
    assert fetched.id == first.id and fetched.output_text == "The answer is 42."
    unstored = api.responses.create(model="default", input="x", store=False)
    with pytest.raises(openai.NotFoundError):
        api.responses.retrieve(unstored.id)
    with pytest.raises(openai.NotFoundError):
        api.responses.create(model="default", input="x", previous_response_id="resp_" + "0" * 32)


def test_models_and_health(served: Gateway) -> None:
    models = client(served).models.list()
    assert [m.id for m in models.data] == ["default"]
    assert httpx.get(f"{served.url}/health", timeout=5).json() == {"status": "ok"}  # no key
    health = httpx.get(f"{served.url}/health", timeout=5,
                       headers={"Authorization": f"Bearer {KEY}"}).json()  # the details
    assert health["status"] == "ok" and health["profiles"]["default"]["ready"] is True
    assert KEY not in json.dumps(health) and "sk-" not in json.dumps(health)


def test_every_auth_refusal(served: Gateway) -> None:
    for key in ("wrong-key-0123456789abcdef", ""):
        with pytest.raises(openai.AuthenticationError) as refused:
            client(served, key or "x").models.list()
        assert refused.value.status_code == 401
    for headers in ({}, {"Authorization": KEY}, {"Authorization": f"Basic {KEY}"}):
        response = httpx.post(f"{served.url}/v1/chat/completions", headers=headers, timeout=5,
                              json={"model": "default", "messages": []})
        assert response.status_code == 401
        assert response.json()["error"]["type"] == "authentication_error"


@pytest.mark.parametrize(("body", "status", "fragment"), [
    (b"{not json", 400, "not valid JSON"),
    (b'{"model": "default", "messages": "hi"}', 400, "messages"),
    (b'{"model": "default", "messages": []}', 400, "messages"),
    (b'{"model": "default", "messages": [{"role": "wizard", "content": "hi"}]}', 400,
     "messages.0.role"),
    (b'{"model": "default", "messages": [{"role": "user", "content": 7}]}', 400,
     "messages.0.content"),
    (b'{"model": "default", "messages": [{"role": "assistant", "content": "hi"}]}', 400,
     "last message"),
    (b'{"model": "nosuch", "messages": [{"role": "user", "content": "hi"}]}', 404, "nosuch"),
    (b'{"model": "default", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}',
     400, "an image part needs a URL"),
    (b'{"model": "default", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}',
     400, "only text and image content"),
    (b"[1, 2]", 400, "body"),
])
def test_bad_bodies_are_refused_and_nothing_is_written(served: Gateway, root: Path, body: bytes,
                                                      status: int, fragment: str) -> None:
    before = sessions(root) if (root / "state.db").exists() else []
    response = httpx.post(f"{served.url}/v1/chat/completions", content=body, timeout=5,
                          headers={"Authorization": f"Bearer {KEY}",
                                   "Content-Type": "application/json"})
    assert response.status_code == status, response.text
    assert fragment in response.json()["error"]["message"]
    assert (sessions(root) if (root / "state.db").exists() else []) == before
    assert httpx.get(f"{served.url}/health", timeout=5).status_code == 200


def test_huge_bodies_are_refused(served: Gateway) -> None:
    body = b'{"model": "default", "messages": [{"role": "user", "content": "' + \
        b"x" * (5 * 1024 * 1024) + b'"}]}'
    response = httpx.post(f"{served.url}/v1/chat/completions", content=body, timeout=30,
                          headers={"Authorization": f"Bearer {KEY}",
                                   "Content-Type": "application/json"})
    assert response.status_code == 413


def test_requests_run_concurrently(root: Path, environ: dict[str, str]) -> None:
    """Three requests must be inside the model at once: a barrier proves the overlap."""
    barrier = threading.Barrier(3, timeout=20)

    def respond(request: RecordedRequest) -> Reply:
        barrier.wait()  # raises (and the request fails) unless 3 calls overlap
        return Reply(text="together")

    with FakeLLM(fallback=respond, strict=False) as llm:
        configure(root, llm.openai_base_url)
        with gateway(environ, root) as gw, ThreadPoolExecutor(3) as pool:
            api = client(gw)
            answers = list(pool.map(lambda i: api.chat.completions.create(
                model="default", messages=[{"role": "user", "content": f"q{i}"}]), range(3)))
    assert [a.choices[0].message.content for a in answers] == ["together"] * 3


@pytest.mark.parametrize(("limit", "running"), [(1, "1 turn "), (2, "2 turns ")])
def test_the_concurrency_limit_answers_429(root: Path, environ: dict[str, str], limit: int,
                                           running: str) -> None:
    release = threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        release.wait(20)
        return Reply(text="slow")

    with FakeLLM(fallback=respond, strict=False) as llm:
        configure(root, llm.openai_base_url,
                  platforms__enabled__api_server__settings__max_concurrency=limit)
        with gateway(environ, root) as gw, ThreadPoolExecutor(limit) as pool:
            api = client(gw)
            first = [pool.submit(api.chat.completions.create, model="default",
                                 messages=[{"role": "user", "content": f"q{i}"}])
                     for i in range(limit)]
            llm.wait_for_requests(limit, timeout=20)
            with pytest.raises(openai.RateLimitError) as refused:
                api.chat.completions.create(model="default",
                                            messages=[{"role": "user", "content": "two"}])
            assert f"is running {running}" in refused.value.message
            release.set()
            assert [f.result(30).choices[0].message.content for f in first] == ["slow"] * limit
