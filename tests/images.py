"""Real image files for the image tests: a PNG, a JPEG, a GIF and a WebP, each whole
and small, built from their formats' own structure (no imaging library is needed)."""

from __future__ import annotations

import struct
import zlib
from typing import Any


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A solid-colour PNG of ``width`` x ``height``."""
    row = b"\0" + bytes(rgb) * width
    return (b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(row * height)) + _chunk(b"IEND", b""))


JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300080606070605080707070909080a0c140d0c0b"
    "0b0c1912130f141d1a1f1e1d1a1c1c20242e2720222c231c1c2837292c30313434341f27393d38323c2e3334"
    "32ffc0000b080001000101011100ffc4001f0000010501010101010100000000000000000102030405060708"
    "090a0bffc400b5100002010303020403050504040000017d01020300041105122131410613516107227114"
    "328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a434445464748"
    "494a535455565758595a636465666768696a737475767778797a838485868788898a92939495969798999a"
    "a2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8"
    "e9eaf1f2f3f4f5f6f7f8f9faffda0008010100003f00fbd3ffd9")
"""A 1x1 baseline JPEG."""
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c000000000100"
                    "01000002024401003b")
"""A 1x1 GIF89a."""
WEBP = bytes.fromhex("524946461a000000574542505650384c0d0000002f0000001007101111888808"
                     "0000")
"""A 1x1 lossless WebP."""


def wire_images(request: Any) -> list[tuple[str, str]]:
    """``(MIME type, base64 data)`` of each image in a fake LLM request's last user
    message, read in the request's own wire format (chat completions ``image_url``,
    Anthropic ``image`` blocks, Responses ``input_image``); asserts the format's shape."""
    body = request.body
    if request.wire == "responses":
        last = [item for item in body["input"] if item.get("role") == "user"][-1]
        urls = [part["image_url"] for part in last["content"]
                if part["type"] == "input_image"]
        return [_data_url(url) for url in urls]
    last = [m for m in body["messages"] if m["role"] == "user"][-1]
    parts = last["content"] if isinstance(last["content"], list) else []
    if request.wire == "anthropic":
        return [(part["source"]["media_type"], part["source"]["data"]) for part in parts
                if part["type"] == "image" and part["source"]["type"] == "base64"]
    assert request.wire == "openai_chat", request.wire
    return chat_images(last)


def chat_images(message: dict[str, Any]) -> list[tuple[str, str]]:
    """``(MIME type, base64 data)`` of each ``image_url`` part of a chat message."""
    parts = message["content"] if isinstance(message["content"], list) else []
    return [_data_url(part["image_url"]["url"]) for part in parts
            if part["type"] == "image_url"]


def wire_text(request: Any) -> str:
    """Every text of a fake LLM request's user messages, joined (any wire format)."""
    body = request.body
    items = body.get("input") if request.wire == "responses" else body["messages"]
    texts = []
    for message in items:
        if message.get("role") != "user":
            continue
        content = message["content"]
        parts = content if isinstance(content, list) else [{"text": content}]
        texts += [str(part.get("text", "")) for part in parts if "text" in part]
    return "\n".join(texts)


def _data_url(url: str) -> tuple[str, str]:
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), url[:60]
    return head[5:-7], data
