"""The OpenAI wire formats the API server speaks: request bodies, responses, errors.

Request bodies are validated strictly where it matters (roles, types, sizes) and
leniently elsewhere: parameters the agent decides itself (``temperature``,
``tools``, ...) are accepted and ignored, as OpenAI-compatible servers do.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_MESSAGES = 1000
MAX_TEXT = 1_000_000

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = Field(None, max_length=MAX_TEXT)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Role
    content: str | list[TextPart] | None = None
    name: str | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None


class InputMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart]
    type: Literal["message"] = "message"


class ResponsesRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=200)
    input: str | list[InputMessage] = Field(min_length=1)
    instructions: str | None = Field(None, max_length=MAX_TEXT)
    previous_response_id: str | None = Field(None, max_length=200)
    store: bool = True
    stream: bool = False


class WireError(Exception):
    """An error answered in OpenAI's JSON shape."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = \
            status, message, kind, param, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


def text_of(content: str | list[TextPart] | None, where: str) -> str:
    """A message's text; only text parts are understood."""
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for part in content:
        if part.type not in ("text", "input_text", "output_text") or part.text is None:
            raise WireError(400, f"{where}: only text content is supported, got a "
                                 f"{part.type!r} part", param=where)
        texts.append(part.text)
    return "\n".join(texts)


def split_conversation(messages: Sequence[tuple[str, str]], where: str
                       ) -> tuple[str | None, list[dict[str, Any]], str]:
    """``(instructions, history, last user text)`` of a client's conversation."""
    instructions = "\n\n".join(text for role, text in messages
                               if role in ("system", "developer") and text) or None
    turns = [(role, text) for role, text in messages if role in ("user", "assistant")]
    if not turns or turns[-1][0] != "user":
        raise WireError(400, f"{where}: the last message must come from the user", param=where)
    if not turns[-1][1].strip():
        raise WireError(400, f"{where}: the last user message is empty", param=where)
    history = [{"role": role, "content": text} for role, text in turns[:-1]]
    return instructions, history, turns[-1][1]


def completion(model: str, text: str, usage: Any, finish_reason: str = "stop"
               ) -> dict[str, Any]:
    return {"id": new_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "finish_reason": finish_reason,
                                         "message": {"role": "assistant", "content": text}}],
            "usage": usage_body(usage)}


def chunk(chunk_id: str, model: str, delta: dict[str, Any], finish_reason: str | None = None,
          **extra: Any) -> dict[str, Any]:
    return {"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "delta": delta,
                                         "finish_reason": finish_reason}], **extra}


def usage_body(usage: Any) -> dict[str, int]:
    prompt = int(getattr(usage, "input_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "output_tokens", 0) or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens}


def response_object(response_id: str, model: str, text: str, usage: Any,
                     previous: str | None, store: bool) -> dict[str, Any]:
    tokens = usage_body(usage)
    return {
        "id": response_id, "object": "response", "created_at": int(time.time()),
        "status": "completed", "model": model, "previous_response_id": previous,
        "store": store, "error": None, "incomplete_details": None, "instructions": None,
        "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
        "output": [{"type": "message", "id": new_id("msg"), "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": tokens["prompt_tokens"],
                  "output_tokens": tokens["completion_tokens"],
                  "total_tokens": tokens["total_tokens"]},
    }


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}" if prefix == "chatcmpl" else \
        f"{prefix}_{uuid.uuid4().hex}"
