"""``/image PATH`` in the interactive chat (a real pseudo-terminal, the fake LLM): the
image goes with the next message only (and again with it on /retry), /help lists the
command, a bad path is one line and the chat goes on."""

from __future__ import annotations

import base64
from pathlib import Path

import images
from conftest import write_fake_provider
from fakellm import FakeLLM, Reply
from test_chat_tty import spawn_chat


def test_slash_image_attaches_to_the_next_message_only(root: Path, environ,
                                                       tmp_path: Path) -> None:
    shot = tmp_path / "my shot.png"
    shot.write_bytes(images.png(4, 4))
    (tmp_path / "notes.png").write_text("not a picture")
    with FakeLLM() as llm:
        write_fake_provider(root, llm.openai_base_url)
        child = spawn_chat(environ, tmp_path)
        try:
            child.sendline("/help")
            child.expect(r"/image \[PATH\]\s+attach an image")
            child.sendline("/image notes.png")
            child.expect("notes.png: not an image")
            child.sendline("/image 'my shot.png'")
            child.expect(r"attached my shot.png \(image/png, 7\d bytes\) to your next message")
            child.sendline("/image")
            child.expect("attached to your next message: my shot.png")
            llm.push(Reply(text="a red square"), Reply(text="a red square, again"),
                     Reply(text="no image this time"))
            child.sendline("what is this?")
            child.expect("a red square")
            child.sendline("/retry")  # the message goes again with its image
            child.expect("retrying: what is this")
            child.expect("a red square, again")
            child.sendline("and this?")
            child.expect("no image this time")
            child.sendline("/exit")
            child.expect("session ")
        finally:
            child.close(force=True)
    first, retried, third = llm.requests[-3:]
    sent = [("image/png", base64.b64encode(shot.read_bytes()).decode())]
    assert images.wire_images(first) == images.wire_images(retried) == sent
    assert images.wire_images(third) == []
