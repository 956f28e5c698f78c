"""The request bodies the API server accepts, validated strictly.

A parameter of the wrong type is a 400 naming it (``"stream": "yes"`` is not true, a
string is no ``temperature``), and an unknown one is refused as OpenAI refuses it.
Sampling parameters (``temperature``, ``max_tokens``, ...) are checked and then left to
the profile: the agent makes several model calls per request with the provider settings
of its config. What the server cannot honour is refused with the reason: ``n`` above 1
(the agent gives one answer per request) and client-defined tools (it runs the profile's
own tools).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hermes.gateway.api_server.wire import WireError

MAX_MESSAGES = 1000
MAX_TEXT = 1_000_000
CLIENT_TOOLS = ("tools", "functions", "tool_choice", "function_call")
BodyT = TypeVar("BodyT", bound=BaseModel)

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = Field(None, max_length=MAX_TEXT)


class ChatMessage(BaseModel):
    """One message of the client's conversation (extra fields, e.g. an earlier answer's
    ``refusal``, are kept out of the way rather than refused)."""

    model_config = ConfigDict(extra="allow")
    role: Role
    content: str | list[TextPart] | None = None
    name: str | None = None


class InputMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart]
    type: Literal["message"] = "message"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class StreamOptions(_Strict):
    include_usage: bool = False
    include_obfuscation: bool | None = None


class _Request(_Strict):
    """What both endpoints take."""

    model: str = Field(min_length=1, max_length=200)
    stream: bool = False
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    user: str | None = None
    metadata: dict[str, str] | None = None
    parallel_tool_calls: bool | None = None
    service_tier: str | None = None
    prompt_cache_key: str | None = None
    safety_identifier: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_client_tools(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for key in CLIENT_TOOLS:
            if data.get(key) not in (None, []):
                raise WireError(400, f"{key}: the server runs the profile's own tools; "
                                     "client-defined tools, functions and tool_choice are not "
                                     "supported", param=key, code="unsupported_parameter")
        return {k: v for k, v in data.items() if k not in CLIENT_TOOLS}


class ChatRequest(_Request):
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream_options: StreamOptions | None = None
    n: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    logit_bias: dict[str, float] | None = None
    seed: int | None = None
    stop: str | list[str] | None = None
    store: bool | None = None
    reasoning_effort: str | None = None

    @field_validator("n")
    @classmethod
    def _one_choice(cls, n: int | None) -> int | None:
        if n is not None and n != 1:
            raise WireError(400, f"n: only n=1 is supported (got {n}): the agent gives one "
                                 "answer per request", param="n", code="unsupported_parameter")
        return n


class ResponsesRequest(_Request):
    input: str | list[InputMessage] = Field(min_length=1)
    instructions: str | None = Field(None, max_length=MAX_TEXT)
    previous_response_id: str | None = Field(None, max_length=200)
    store: bool = True
    max_output_tokens: int | None = Field(None, ge=1)
    truncation: Literal["auto", "disabled"] | None = None


def parse_body(raw: bytes, model: type[BodyT]) -> BodyT:
    """The request body as ``model``, or a 400 naming the first bad field."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise WireError(400, f"the body is not valid JSON ({exc})") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        message = ("unrecognized or unsupported parameter" if first["type"] == "extra_forbidden"
                   else first.get("msg", "invalid value"))
        raise WireError(400, f"{where}: {message}", param=where) from None


TEXT_PARTS = ("text", "input_text", "output_text")
IMAGE_PARTS = ("image_url", "input_image")
"""Chat completions' ``image_url`` part and the Responses API's ``input_image``."""


def parts_of(content: str | list[TextPart] | None, where: str) -> tuple[str, list[str]]:
    """A message's text, and the URLs of its images (``data:`` or http(s))."""
    if content is None or isinstance(content, str):
        return content or "", []
    texts, urls = [], []
    for index, part in enumerate(content):
        if part.type in IMAGE_PARTS:
            urls.append(_image_url(part, f"{where}.{index}"))
        elif part.type in TEXT_PARTS and part.text is not None:
            texts.append(part.text)
        else:
            raise WireError(400, f"{where}: only text and image content is supported, got "
                                 f"a {part.type!r} part", param=where)
    return "\n".join(texts), urls


def _image_url(part: TextPart, where: str) -> str:
    """``{"image_url": {"url": ...}}`` (chat) or ``{"image_url": "..."}`` (Responses)."""
    image = (part.model_extra or {}).get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    if not isinstance(url, str) or not url:
        raise WireError(400, f"{where}.image_url: an image part needs a URL (data:image/...;"
                             "base64,... or http(s)); file ids are not supported",
                        param=f"{where}.image_url")
    return url


def split_conversation(messages: Sequence[tuple[str, str]], where: str, *,
                       empty_last: bool = False
                       ) -> tuple[str | None, list[dict[str, Any]], str]:
    """``(instructions, history, last user text)`` of a client's conversation;
    ``empty_last``: the last user message may have no text (it carries images)."""
    instructions = "\n\n".join(text for role, text in messages
                               if role in ("system", "developer") and text) or None
    turns = [(role, text) for role, text in messages if role in ("user", "assistant")]
    if not turns or turns[-1][0] != "user":
        raise WireError(400, f"{where}: the last message must come from the user", param=where)
    if not turns[-1][1].strip() and not empty_last:
        raise WireError(400, f"{where}: the last user message is empty", param=where)
    history = [{"role": role, "content": text} for role, text in turns[:-1]]
    return instructions, history, turns[-1][1]
