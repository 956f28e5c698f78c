"""OpenAI-compatible chat completions spoken directly over httpx, for an endpoint of the
user's own (``provider: openai`` at an ``api_base`` that is not OpenAI's: vLLM,
llama.cpp, LM Studio, a gateway — the ``custom`` provider).

There litellm would only hand the request to the openai SDK unchanged, yet importing
it costs every process ~130 MiB and ~3 s, and the SDK's request transforms ~0.5 ms a
message of history a call (issue 26). Every other provider, api mode, and any
parameter that is not plain OpenAI goes through litellm (``serves`` decides). The
caller (``LiteLLMClient``) retries, falls back and prices as for litellm's calls.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from hermes.models import chat_stream
from hermes.models.types import ModelReply, StreamCallbacks, ToolCall

PLAIN_PARAMS = frozenset({
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "seed", "n",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
    "tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort", "user",
    "metadata", "extra_headers", "extra_body",
})
"""Parameters sent as the OpenAI API defines them; any other goes through litellm."""
_OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")
"""OpenAI's own endpoints, where litellm adapts parameters to the model (o-series...)."""


def serves(model: str, api_mode: str, api_base: str | None, params: dict[str, Any]) -> bool:
    """Whether a call to ``model`` (litellm's ``provider/model``) goes out here."""
    if api_mode != "chat_completions" or not api_base or not model.startswith("openai/"):
        return False
    host = (urlsplit(api_base).hostname or "").lower()
    if host.endswith(_OPENAI_HOSTS) or urlsplit(api_base).scheme not in ("http", "https"):
        return False
    return set(params) <= PLAIN_PARAMS


class EndpointError(Exception):
    """The endpoint answered with an error (``status_code``; 500 for a broken stream)."""

    def __init__(self, message: str, status_code: int, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.response_headers = headers or {}


class ChatWire:
    """Calls to OpenAI-compatible endpoints, one connection pool per endpoint and
    timeout (kept alive between calls; safe to share between threads)."""

    def __init__(self, transport: Any = None) -> None:
        self._clients: dict[tuple[str, float], Any] = {}
        self._lock = threading.Lock()
        self._transport = transport
        """An httpx transport to use instead of the network (the warm server's rehearsal)."""

    def complete(self, *, model: str, api_base: str, api_key: str | None, timeout: float,
                 messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                 stream: bool, callbacks: StreamCallbacks, params: dict[str, Any]) -> ModelReply:
        """One call; usage without a cost (the caller prices it). Raises ``EndpointError``,
        httpx's errors, or ``CallCancelledError``."""
        body, headers = _request(model, api_key, messages, tools, stream, params)
        client = self._client(api_base, timeout)
        url = api_base.rstrip("/") + "/chat/completions"
        if not stream:
            response = client.post(url, content=body, headers=headers)
            if response.status_code >= 400:
                raise _endpoint_error(response.status_code, response.text, response.headers)
            return _reply(_json(response.text), model)
        with client.stream("POST", url, content=body, headers=headers) as response:
            if response.status_code >= 400:
                text = response.read().decode(errors="replace")
                raise _endpoint_error(response.status_code, text, response.headers)
            try:
                return chat_stream.assemble(_events(response.iter_lines()), model, callbacks,
                                            chat_stream.usage_of)
            except chat_stream.StreamEndedEarly as exc:
                raise EndpointError(str(exc), 500) from None

    def _client(self, api_base: str, timeout: float) -> Any:
        import httpx

        with self._lock:
            client = self._clients.get((api_base, timeout))
            if client is None:
                client = self._clients[(api_base, timeout)] = httpx.Client(
                    timeout=httpx.Timeout(timeout), follow_redirects=False,
                    verify=_needs_tls(api_base), transport=self._transport)
            return client


def _needs_tls(api_base: str) -> bool:
    """Whether certificates may be met: not at a plain-http endpoint (redirects are not
    followed) reached directly or through a plain-http proxy. Loading the CA bundle
    costs ~40 ms a client, which a command of the warm server would pay every time."""
    if urlsplit(api_base).scheme != "http":
        return True
    proxies = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    return any(os.environ.get(name, "").lower().startswith("https:") for name in proxies)


def _request(model: str, api_key: str | None, messages: list[dict[str, Any]],
             tools: list[dict[str, Any]] | None, stream: bool,
             params: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    plain = {k: v for k, v in params.items() if k not in ("extra_headers", "extra_body")}
    body: dict[str, Any] = {"model": model.removeprefix("openai/"), "messages": messages,
                            **plain, **(params.get("extra_body") or {})}
    if tools:
        body["tools"] = tools
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    headers = {"content-type": "application/json", "accept": "application/json",
               **{str(k): str(v) for k, v in (params.get("extra_headers") or {}).items()}}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return json.dumps(body, ensure_ascii=False).encode(), headers


def _endpoint_error(status: int, text: str, headers: Any) -> EndpointError:
    """The endpoint's own message (``{"error": {"message": ...}}`` or its text)."""
    message = text.strip()[:500]
    try:
        error = json.loads(text).get("error")
        message = str(error.get("message", message) if isinstance(error, dict)
                      else error or message)
    except (ValueError, AttributeError):
        pass
    return EndpointError(f"HTTP {status}: {message or 'no message'}", status,
                         {k.lower(): v for k, v in dict(headers).items()})


def _json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        raise EndpointError(f"the endpoint answered something that is not JSON: {text[:80]!r}",
                            502) from None
    if not isinstance(data, dict):
        raise EndpointError("the endpoint's answer is not a JSON object", 502)
    if "error" in data:
        raise _stream_error(data["error"])
    return data


def _stream_error(error: Any) -> EndpointError:
    """An error event inside a stream (or a 200 body holding one)."""
    fields = error if isinstance(error, dict) else {"message": str(error)}
    kind = f"{fields.get('type') or ''} {fields.get('code') or ''}".lower()
    status = 429 if "rate_limit" in kind else 400 if "invalid_request" in kind else 500
    code = fields.get("code")
    if isinstance(code, int) and 400 <= code < 600:
        status = code
    return EndpointError(str(fields.get("message") or "error in the stream"), status)


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream, up to ``[DONE]``."""
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        if data:
            yield _json(data)


def _reply(data: dict[str, Any], model: str) -> ModelReply:
    choices = data.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = tuple(ToolCall(c.get("id") or "", (c.get("function") or {}).get("name") or "",
                           (c.get("function") or {}).get("arguments") or "")
                  for c in message.get("tool_calls") or [])
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return ModelReply(message.get("content") or "", calls, reasoning or None,
                      choices[0].get("finish_reason"),
                      chat_stream.usage_of(data.get("usage")), model)
