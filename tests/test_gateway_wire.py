"""The API server at the wire, against a real `hermes gateway run`: request bodies are counted
as they arrive (chunked too) and cut off past the limit or when they stall, a client hanging
up mid-body is one log line, requests are validated strictly, and every error is answered in
OpenAI's shape."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from conftest import stop_servers, wait_until
from fakellm import FakeLLM, Reply
from gateway_support import KEY, Gateway, configure, gateway

LIMIT = 4 * 1024 * 1024
HEAD = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer " + KEY.encode() + b"\r\nContent-Type: application/json\r\n")
ERROR_FIELDS = {"message", "type", "param", "code"}
JSON_KEY = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda request: Reply(text="fine"), strict=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM) -> Iterator[Gateway]:
    """One gateway for the module (each test checks only what changed while it ran)."""
    user_home = tmp_path_factory.mktemp("wire") / "user"
    user_home.mkdir()
    environ = {"HOME": str(user_home), "PATH": os.environ.get("PATH", ""),
               "LANG": "C.UTF-8", "HERMES_NO_DAEMON": "1"}
    configure(user_home / ".hermes", llm.openai_base_url,
              platforms__enabled__api_server__settings__read_timeout=1.5)
    try:
        with gateway(environ, user_home / ".hermes") as gw:
            yield gw
    finally:
        stop_servers(user_home)


@pytest.fixture
def root(served: Gateway) -> Path:
    return served.home


@pytest.fixture
def untouched(root: Path, llm: FakeLLM) -> Iterator[None]:
    """The test must not reach the model nor write to state.db."""
    before, calls = stored(root), len(llm.requests)
    yield
    assert len(llm.requests) == calls and stored(root) == before


def stored(root: Path) -> tuple[int, list[str]]:
    """Bytes of state.db (and its WAL) and the sessions it holds."""
    files = [p for p in root.glob("state.db*") if p.is_file()]
    if not (root / "state.db").exists():
        return sum(p.stat().st_size for p in files), []
    with sqlite3.connect(root / "state.db") as db:
        ids = [row[0] for row in db.execute("SELECT id FROM sessions")]
    return sum(p.stat().st_size for p in files), ids


def chat_body(text_bytes: int) -> bytes:
    return (b'{"model": "default", "messages": [{"role": "user", "content": "'
            + b"x" * text_bytes + b'"}]}')


def send_chunked(sock: socket.socket, body: bytes, piece: int = 64 * 1024) -> int:
    """Send ``body`` in chunks until the server cuts the connection; the bytes sent."""
    sent = 0
    try:
        for start in range(0, len(body), piece):
            part = body[start:start + piece]
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            sent += len(part)
        sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    return sent


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of the answer, read until the server closes."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
    return int(status_line.split()[1]), headers, body


def assert_openai_error(body: dict[str, object], *fragments: str) -> dict[str, object]:
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict) and set(error) == ERROR_FIELDS, error
    assert isinstance(error["message"], str) and isinstance(error["type"], str)
    for fragment in fragments:
        assert fragment in error["message"], (fragment, error)
    return error


# --- item 2: the body limit counts bytes as they arrive ------------------------------


def test_a_chunked_body_past_the_limit_is_cut_off_with_413(served: Gateway,
                                                          untouched: None) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        sent = send_chunked(sock, chat_body(20 * 1024 * 1024))
        status, headers, body = read_response(sock)
    assert status == 413 and headers.get("connection") == "close"
    assert_openai_error(json.loads(body), str(LIMIT))
    assert sent < 20 * 1024 * 1024  # cut off, not read whole
    assert httpx.get(f"{served.url}/health", timeout=5).status_code == 200


def test_a_chunked_body_within_the_limit_is_answered(served: Gateway, llm: FakeLLM) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(HEAD + b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        assert send_chunked(sock, chat_body(100_000), piece=7_000) > 100_000
        status, _headers, body = read_response(sock)
    assert status == 200, body
    assert b"fine" in body and llm.requests[-1].body["messages"][-1]["content"] == "x" * 100_000


def test_a_stalled_body_is_cut_off_after_the_read_timeout(served: Gateway,
                                                          untouched: None) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(HEAD + b"Content-Length: 1000\r\n\r\n" + b'{"model": "default", ')
        status, headers, body = read_response(sock)  # the server answers and closes
    assert status == 408 and headers.get("connection") == "close"
    assert_openai_error(json.loads(body), "1.5 s")


def test_a_declared_length_past_the_limit_is_refused_before_reading(served: Gateway) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(HEAD + b"Content-Length: %d\r\n\r\n" % (LIMIT + 1))
        status, _headers, body = read_response(sock)  # no byte of the body was sent
    assert status == 413
    assert_openai_error(json.loads(body), str(LIMIT))


# --- item 16: a client hanging up mid-body ------------------------------------------


def test_a_client_hanging_up_mid_body_is_one_log_line(served: Gateway, root: Path) -> None:
    log = root / "logs" / "gateway.log"
    lines_before = len(log.read_text().splitlines())
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(HEAD + b"Content-Length: 1000\r\n\r\n" + b"x" * 500)
    line = wait_until(lambda: [entry for entry in log.read_text().splitlines()[lines_before:]
                               if "mid-body" in entry], what="the hang-up logged")
    assert len(line) == 1 and "Traceback" not in log.read_text()
    assert json.loads(line[0])["level"] == "info"
    assert httpx.get(f"{served.url}/health", timeout=5).status_code == 200
    assert "Traceback" not in served.output() and "Exception" not in served.output()


# --- item 17: strict requests, errors in OpenAI's shape -------------------------------


def post(gw: Gateway, path: str, body: object, **headers: str) -> httpx.Response:
    return httpx.post(f"{gw.url}{path}", json=body, timeout=30,
                      headers={"Authorization": f"Bearer {KEY}", **headers})


USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(("method", "path", "status", "fragment"), [
    ("GET", "/v1/nothing", 404, "/v1/nothing"),
    ("POST", "/v2/chat/completions", 404, "/v2/chat/completions"),
    ("GET", "/v1/chat/completions", 405, "POST"),
    ("DELETE", "/v1/models", 405, "GET"),
])
def test_unknown_routes_and_methods_answer_in_openai_shape(served: Gateway, method: str,
                                                           path: str, status: int,
                                                           fragment: str) -> None:
    response = httpx.request(method, f"{served.url}{path}", timeout=10,
                             headers={"Authorization": f"Bearer {KEY}"})
    assert response.status_code == status
    assert_openai_error(response.json(), fragment)


@pytest.mark.parametrize(("path", "body", "param", "fragment"), [
    ("/v1/chat/completions", {"stream": "yes"}, "stream", "valid boolean"),
    ("/v1/chat/completions", {"temperature": "hot"}, "temperature", "valid number"),
    ("/v1/chat/completions", {"temperature": "0.5"}, "temperature", "valid number"),
    ("/v1/chat/completions", {"max_tokens": "100"}, "max_tokens", "valid integer"),
    ("/v1/chat/completions", {"n": 2}, "n", "only n=1"),
    ("/v1/chat/completions", {"n": "1"}, "n", "valid integer"),
    ("/v1/chat/completions", {"tools": [{"type": "function", "function": {"name": "f"}}]},
     "tools", "the profile's own tools"),
    ("/v1/chat/completions", {"functions": [{"name": "f"}]}, "functions",
     "the profile's own tools"),
    ("/v1/chat/completions", {"tool_choice": "auto"}, "tool_choice", "the profile's own tools"),
    ("/v1/chat/completions", {"stream_options": {"include_usage": "yes"}},
     "stream_options.include_usage", "valid boolean"),
    ("/v1/chat/completions", {"frobnicate": 1}, "frobnicate", "unrecognized"),
    ("/v1/responses", {"store": "no"}, "store", "valid boolean"),
    ("/v1/responses", {"temperature": "warm"}, "temperature", "valid number"),
    ("/v1/responses", {"tools": [{"type": "web_search"}]}, "tools",
     "the profile's own tools"),
    ("/v1/responses", {"frobnicate": 1}, "frobnicate", "unrecognized"),
])
def test_a_wrong_or_unsupported_parameter_is_a_400_naming_it(
        served: Gateway, untouched: None, path: str, body: dict[str, object], param: str,
        fragment: str) -> None:
    base = {"model": "default"} | ({"messages": USER} if "chat" in path else {"input": "hi"})
    response = post(served, path, base | body)
    assert response.status_code == 400, response.text
    error = assert_openai_error(response.json(), param, fragment)
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_supported_parameters_of_the_right_type_are_accepted(served: Gateway) -> None:
    api = openai.OpenAI(base_url=f"{served.url}/v1", api_key=KEY, max_retries=0, timeout=30)
    reply = api.chat.completions.create(model="default", messages=USER, n=1, temperature=0.2,
                                        max_tokens=50, top_p=1, user="ada", seed=7, stop=["x"])
    assert reply.choices[0].message.content == "fine"
    with pytest.raises(openai.BadRequestError) as refused:
        api.chat.completions.create(model="default", messages=USER, n=3)
    assert refused.value.param == "n" and "only n=1" in refused.value.message
    response = api.responses.create(model="default", input="hi", temperature=0.5,
                                    max_output_tokens=64)
    assert response.output_text == "fine"


def test_every_error_status_has_openai_shape(served: Gateway) -> None:
    url = f"{served.url}/v1/chat/completions"
    cases = [
        (httpx.post(url, content=b"{nope", timeout=10, headers=JSON_KEY), 400),
        (httpx.post(url, json={"model": "default", "messages": USER}, timeout=10), 401),
        (post(served, "/v1/chat/completions", {"model": "nosuch", "messages": USER}), 404),
        (httpx.post(url, content=b"x" * (LIMIT + 1), timeout=30, headers=JSON_KEY), 413),
    ]
    for response, status in cases:
        assert response.status_code == status, response.text
        assert_openai_error(response.json())


def test_an_internal_error_is_a_500_in_openai_shape_and_logged(served: Gateway,
                                                               root: Path) -> None:
    store, aside = root / "api_responses", root / "api_responses.aside"
    if store.exists():
        store.rename(aside)
    store.write_text("a file where the store's directory belongs")
    try:
        response = post(served, "/v1/responses", {"model": "default", "input": "hi"})
    finally:
        store.unlink()
        if aside.exists():
            aside.rename(store)
    assert response.status_code == 500
    assert_openai_error(response.json(), "internal error")
    events = [json.loads(line) for line in (root / "logs" / "gateway.log").read_text()
              .splitlines()]
    assert any(e["event"] == "request failed" and "traceback" in e for e in events)
    assert "Traceback" not in served.output()
