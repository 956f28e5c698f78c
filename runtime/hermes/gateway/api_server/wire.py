"""The OpenAI wire formats the API server answers in: completions, chunks, responses,
and errors (request bodies are ``request_models``)."""

from __future__ import annotations

import time
import uuid
from typing import Any


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
