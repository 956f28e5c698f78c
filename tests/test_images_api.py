"""Images through the API server (issue 28, vision), over real HTTP with the openai SDK:
chat completions' ``image_url`` parts and the Responses API's ``input_image``, as data:
URLs and as http(s) URLs fetched under the address rules, reach the model as image parts;
a bad image, a refused address and an image on a non-user message are 400s naming where."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

import images
from fakellm import FakeLLM, Reply
from gateway_support import KEY, Gateway, configure, gateway

PICTURE = images.png(5, 3)
ENCODED = base64.b64encode(PICTURE).decode()
DATA_URL = f"data:image/png;base64,{ENCODED}"


class ImageSite(BaseHTTPRequestHandler):
    """``/shot.png`` (an image served as image/png), ``/shot.bin`` (the same bytes as
    application/octet-stream), ``/metadata`` (a redirect to the cloud metadata address)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/metadata":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()
            return
        kind = {"/shot.png": "image/png", "/shot.bin": "application/octet-stream"}.get(self.path)
        if kind is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(PICTURE)))
        self.end_headers()
        self.wfile.write(PICTURE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ImageSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(fallback=lambda request: Reply(text="I see a picture"), strict=False) as fake:
        yield fake


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM, site: str
           ) -> Iterator[Gateway]:
    user_home = tmp_path_factory.mktemp("user")
    root = user_home / ".hermes"
    port = site.rsplit(":", 1)[1]
    configure(root, llm.openai_base_url, web__allow_private=[f"127.0.0.1:{port}"])
    environ = {"HOME": str(user_home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
               "HERMES_NO_DAEMON": "1"}
    with gateway(environ, root) as gw:
        yield gw


def client(gw: Gateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=KEY, max_retries=0, timeout=30)


def ask(gw: Gateway, *parts: dict, stream: bool = False) -> str:
    messages = [{"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                             *parts]}]
    api = client(gw)
    if stream:
        chunks = api.chat.completions.create(model="default", messages=messages, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reply = api.chat.completions.create(model="default", messages=messages)
    return reply.choices[0].message.content or ""


def image_url(url: str) -> dict:
    return {"type": "image_url", "image_url": {"url": url, "detail": "auto"}}


@pytest.mark.parametrize("stream", [False, True])
def test_a_data_url_image_reaches_the_model(served: Gateway, llm: FakeLLM,
                                            stream: bool) -> None:
    assert ask(served, image_url(DATA_URL), stream=stream) == "I see a picture"
    request = llm.requests[-1]
    assert images.wire_images(request) == [("image/png", ENCODED)]
    assert "what is this?" in images.wire_text(request)


@pytest.mark.parametrize("path", ["/shot.png", "/shot.bin"])
def test_an_http_image_is_fetched_under_the_address_rules(served: Gateway, llm: FakeLLM,
                                                          site: str, path: str) -> None:
    assert ask(served, image_url(site + path)) == "I see a picture"
    assert images.wire_images(llm.requests[-1]) == [("image/png", ENCODED)]


def test_responses_input_image_reaches_the_model(served: Gateway, llm: FakeLLM) -> None:
    response = client(served).responses.create(model="default", input=[{
        "role": "user", "content": [{"type": "input_text", "text": "describe"},
                                    {"type": "input_image", "image_url": DATA_URL,
                                     "detail": "auto"}]}])
    assert response.output_text == "I see a picture"
    assert images.wire_images(llm.requests[-1]) == [("image/png", ENCODED)]


def test_an_earlier_user_messages_image_stays_in_the_history(served: Gateway,
                                                            llm: FakeLLM) -> None:
    gif = "data:image/gif;base64," + base64.b64encode(images.GIF).decode()
    client(served).chat.completions.create(model="default", messages=[
        {"role": "user", "content": [{"type": "text", "text": "keep this"}, image_url(gif)]},
        {"role": "assistant", "content": "kept"},
        {"role": "user", "content": [image_url(DATA_URL)]}])  # an image and no text
    sent = [m for m in llm.requests[-1].body["messages"] if m["role"] == "user"]
    assert [images.chat_images(m) for m in sent] == [
        [("image/gif", base64.b64encode(images.GIF).decode())], [("image/png", ENCODED)]]


@pytest.mark.parametrize(("part", "fragment"), [
    (image_url("data:image/png;base64," + base64.b64encode(b"%PDF-1.4").decode()),
     "messages.0.content: data: URL: not an image"),
    (image_url("http://169.254.169.254/latest/meta-data/"), "169.254.169.254"),
    (image_url("http://127.0.0.1:9/shot.png"), "127.0.0.1"),
    (image_url("file:///etc/passwd"), "messages.0.content: image URL refused"),
    ({"type": "image_url", "image_url": {"file_id": "file-1"}}, "file ids are not supported"),
])
def test_a_bad_image_is_a_400_naming_where(served: Gateway, llm: FakeLLM, part: dict,
                                           fragment: str) -> None:
    before = len(llm.requests)
    with pytest.raises(openai.BadRequestError) as refused:
        ask(served, part)
    assert fragment in refused.value.message and "\n" not in refused.value.message
    assert len(llm.requests) == before


def test_a_redirect_to_the_metadata_address_is_refused(served: Gateway, site: str) -> None:
    with pytest.raises(openai.BadRequestError, match="169.254.169.254"):
        ask(served, image_url(site + "/metadata"))


def test_images_only_on_user_messages(served: Gateway) -> None:
    with pytest.raises(openai.BadRequestError, match="messages.0.content: only user messages"):
        client(served).chat.completions.create(model="default", messages=[
            {"role": "system", "content": [image_url(DATA_URL)]},
            {"role": "user", "content": "hi"}])
