"""Images a user attaches (``hermes.agent.attachments``): the real type sniffed, size and
count limits, one line for what cannot be attached; and a turn carrying images on the
one conversation path, reaching the fake LLM as image parts."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import images
from conftest import write_fake_provider
from fakellm import FakeLLM, Reply
from hermes.agent.attachments import (
    ImageRefused,
    VisionLimits,
    from_bytes,
    from_data_url,
    from_path,
    user_content,
)
from hermes.agent.conversations import Conversations
from hermes.agent.factory import Interaction
from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_from_path

LIMITS = VisionLimits()


@pytest.mark.parametrize(("data", "mime"), [(images.png(), "image/png"),
                                            (images.JPEG, "image/jpeg"),
                                            (images.GIF, "image/gif"),
                                            (images.WEBP, "image/webp")])
def test_the_real_type_is_sniffed_whatever_the_name(data: bytes, mime: str,
                                                     tmp_path: Path) -> None:
    named = tmp_path / "picture.png"  # the name says PNG; the bytes decide
    named.write_bytes(data)
    attached = from_path(named, LIMITS)
    assert attached.mime == mime and attached.data == data
    assert attached.part()["image_url"]["url"].startswith(f"data:{mime};base64,")


@pytest.mark.parametrize(("data", "fragment"), [
    (b"", "empty"),
    (b"%PDF-1.7\n...", "not an image this runtime sends to models; attach a PNG, JPEG"),
    (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "not an image"),
    (images.png()[:40], "cut short"),
    (images.JPEG[:120], "cut short"),
    (images.GIF[:20], "cut short"),
    (images.WEBP[:20], "cut short"),
])
def test_what_is_no_whole_image_is_one_line(data: bytes, fragment: str) -> None:
    with pytest.raises(ImageRefused, match=fragment) as refused:
        from_bytes(data, "shot.png", LIMITS)
    assert "\n" not in str(refused.value) and str(refused.value).startswith("shot.png: ")


def test_size_limit_and_unreadable_paths(tmp_path: Path) -> None:
    big = tmp_path / "big.png"
    big.write_bytes(images.png(64, 64))
    with pytest.raises(ImageRefused, match=r"more than vision.max_bytes \(100\)"):
        from_path(big, VisionLimits(max_bytes=100))
    with pytest.raises(ImageRefused, match="no such file"):
        from_path(tmp_path / "missing.png", LIMITS)
    with pytest.raises(ImageRefused, match="is a directory"):
        from_path(tmp_path, LIMITS)


def test_data_urls_decode_and_the_declared_type_is_not_trusted() -> None:
    payload = base64.b64encode(images.JPEG).decode()
    assert from_data_url(f"data:image/png;base64,{payload}", LIMITS).mime == "image/jpeg"
    with pytest.raises(ImageRefused, match="not a base64 data URL"):
        from_data_url("data:image/png,raw", LIMITS)
    with pytest.raises(ImageRefused, match="does not decode"):
        from_data_url("data:image/png;base64,@@@", LIMITS)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(scope="module")
def conversations(tmp_path_factory: pytest.TempPathFactory, llm: FakeLLM
                  ) -> Iterator[Conversations]:
    root = tmp_path_factory.mktemp("home")
    write_fake_provider(root, llm.openai_base_url)
    home = home_from_path(root)
    environ = {"HERMES_HOME": str(root)}
    with build_runtime(home, compose_config(home, environ, []).config, environ) as rt:
        yield Conversations(rt.container.agent_factory())


def sent_user_content(llm: FakeLLM) -> Any:
    return [m for m in llm.requests[-1].body["messages"] if m["role"] == "user"][-1]["content"]


def test_a_turn_carries_its_images_to_the_model(conversations: Conversations,
                                                llm: FakeLLM) -> None:
    shot = from_bytes(images.png(), "shot.png", LIMITS)
    llm.push(Reply("a red square"))
    with conversations.open(Interaction(stream=False)) as conversation:
        assert conversation.run("what is this?", images=[shot]).text == "a red square"
    content = sent_user_content(llm)
    assert content == user_content("what is this?", [shot])
    assert [part["type"] for part in content] == ["text", "image_url"]
    assert shot.base64 in json.dumps(content)


def test_more_images_than_vision_max_images_are_refused_before_the_turn(
        conversations: Conversations, llm: FakeLLM) -> None:
    shot = from_bytes(images.GIF, "dot.gif", LIMITS)
    before = len(llm.requests)
    with conversations.open(Interaction(stream=False)) as conversation, \
            pytest.raises(ImageRefused, match="9 images on one message; vision.max_images"):
        conversation.run("look", images=[shot] * 9)
    assert len(llm.requests) == before


def test_a_row_stored_before_images_were_kept_resumes_as_its_text(
        conversations: Conversations, llm: FakeLLM) -> None:
    store = conversations.factory.deps.sessions
    session_id = store.create_session("cli", "gpt-4o", system_prompt="be brief")
    store.add_messages(session_id, [  # what an MCP tool's image left in a row before
        {"role": "user", "content": "[Images returned by shot above]\n[image_url not kept]"},
        {"role": "assistant", "content": "noted"}])
    llm.push(Reply("still here"))
    with conversations.open(Interaction(stream=False), resume=session_id) as conversation:
        assert conversation.run("and?").text == "still here"
    sent = [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "user"]
    assert sent == ["[Images returned by shot above]\n[image_url not kept]", "and?"]


def test_an_image_without_words_sends_no_empty_text_part() -> None:
    """A photo without a caption: the message is the image alone (an empty text part is
    refused by some APIs and rewritten by litellm into a "[System: ...]" note)."""
    from hermes.agent.attachments import user_content

    image = from_bytes(images.png(2, 2), "photo.png", LIMITS)
    assert [part["type"] for part in user_content("", [image])] == ["image_url"]
    assert [part["type"] for part in user_content("look", [image])] == ["text", "image_url"]
