"""The litellm-backed model client: api modes, streaming, usage, cost, retries, fallbacks.

litellm is imported on first use, never at start-up, and with the local cost
map so that importing it never fetches anything from the network.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes.config.schema import FallbackConfig, ProviderConfig
from hermes.importing import hidden_during_import
from hermes.models import responses_api
from hermes.models.base import ModelClient
from hermes.models.caching import with_cache_breakpoints
from hermes.models.errors import (
    MAX_CONNECT_BACKOFF,
    RETRYABLE,
    CallCancelledError,
    ContextOverflowError,
    ErrorClass,
    ModelCallError,
    classify,
    failure_message,
)
from hermes.models.modes import detect_api_mode, litellm_model
from hermes.models.types import ModelReply, StreamCallbacks, ToolCall, Usage

# Optional modules that litellm's import pulls in only because they are installed, and
# that Hermes never uses: litellm's OCI request signing loads cryptography (and bcrypt
# through it), brought by the ssh environment's paramiko; `import httpx` loads its
# command-line client (httpx._main: click, rich.console, pygments.lexers) whenever
# those are installed. Both are guarded by `except ImportError` where imported. Hidden
# during litellm's import only (-11 MiB in every process that imports litellm);
# anything else imports them as usual.
_NOT_FOR_LITELLM = ("cryptography", "bcrypt", "httpx._main")


def import_litellm() -> Any:
    """Import litellm without network access at import time."""
    # litellm reads this flag once, at import, to use its bundled cost map
    # instead of downloading one. It selects no profile.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "litellm" not in sys.modules:
        # litellm's import leaves ~370k long-lived objects; collecting during the
        # import and scanning them again on every later collection cost ~1 s per run.
        enabled = gc.isenabled()
        gc.disable()
        try:
            with hidden_during_import(_NOT_FOR_LITELLM):
                import litellm  # noqa: F401
        finally:
            gc.freeze()
            if enabled:
                gc.enable()
    import litellm

    # litellm prints "Give Feedback / Get Help" banners to stdout on errors; stdout
    # belongs to the answer (``hermes -z``), and errors are reported by the caller.
    litellm.suppress_debug_info = True
    # litellm prices every stream at its start by counting the prompt with tiktoken's
    # cl100k encoding: +39 MiB and ~0.2 s on the first call of every process. Hermes
    # takes tokens from the provider's usage (stream_options.include_usage) and its
    # own estimates; litellm's counter is never needed.
    litellm.disable_token_counter = True
    return litellm


@dataclass(frozen=True)
class Target:
    """One concrete endpoint to call: the primary provider or a fallback."""

    model: str
    """litellm model string (``provider/model``)."""
    api_mode: str
    api_base: str | None
    api_key: str | None
    timeout: float
    max_retries: int
    extra: dict[str, Any] = field(default_factory=dict)
    api_base_key: str = "provider.api_base"
    """The setting ``api_base`` comes from, named when the endpoint cannot be reached."""


class LiteLLMClient(ModelClient):
    """A model client for any provider litellm knows, built from ``provider`` config."""

    def __init__(self, settings: ProviderConfig, *,
                 sleep: Callable[[float], None] = time.sleep):
        self.settings = settings
        self.model = settings.model
        self._sleep = sleep

    def with_model(self, name: str) -> LiteLLMClient:
        return LiteLLMClient(self.settings.model_copy(update={"model": name}),
                             sleep=self._sleep)

    def takes_images(self) -> bool:
        """``provider.vision`` when set, else litellm's model data (an unknown model
        is taken to read no images)."""
        if self.settings.vision is not None:
            return self.settings.vision
        litellm = import_litellm()
        try:
            return bool(litellm.supports_vision(model=self.litellm_model))
        except Exception:  # noqa: BLE001 - litellm raises many kinds for unknown models
            return False

    @property
    def api_mode(self) -> str:
        return detect_api_mode(self.settings)

    @property
    def litellm_model(self) -> str:
        """``provider/model`` as litellm expects it."""
        return litellm_model(self.settings.provider, self.settings.model, self.api_mode)

    def targets(self) -> list[Target]:
        s = self.settings
        primary = Target(self.litellm_model, self.api_mode, s.api_base, s.api_key, s.timeout,
                         s.max_retries, dict(s.extra))
        return [primary, *(self._fallback(f) for f in s.fallbacks)]

    def _fallback(self, fallback: FallbackConfig) -> Target:
        settings = self.settings.model_copy(update={
            "provider": fallback.provider, "model": fallback.model, "api_base": fallback.api_base,
            "api_key": fallback.api_key, "api_mode": "auto", "fallbacks": []})
        mode = detect_api_mode(settings)
        return Target(litellm_model(fallback.provider, fallback.model, mode), mode,
                      fallback.api_base, fallback.api_key, settings.timeout,
                      settings.max_retries, settings.extra | fallback.extra,
                      "provider.fallbacks")

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 *, stream: bool = False, callbacks: StreamCallbacks | None = None,
                 **params: Any) -> ModelReply:
        """One model turn, retried and falling back as configured.

        Raises ``ContextOverflowError`` (compress, then call again),
        ``CallCancelledError`` (interrupted), or ``ModelCallError`` (failed for good).
        """
        failure: ModelCallError | None = None
        for target in self.targets():
            try:
                return self._with_retries(target, messages, tools, stream,
                                          callbacks or StreamCallbacks(), params)
            except ContextOverflowError:
                raise
            except ModelCallError as exc:
                failure = exc
        assert failure is not None
        raise failure

    def _with_retries(self, target: Target, messages: list[dict[str, Any]],
                      tools: list[dict[str, Any]] | None, stream: bool,
                      callbacks: StreamCallbacks, params: dict[str, Any]) -> ModelReply:
        for attempt in range(target.max_retries + 1):
            try:
                return self._call(target, messages, tools, stream, callbacks, params)
            except CallCancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - litellm raises many types; classified here
                kind = classify(exc)
                message = failure_message(exc, kind, model=target.model,
                                          api_base=target.api_base,
                                          config_key=target.api_base_key)
                if kind is ErrorClass.CONTEXT_OVERFLOW:
                    raise ContextOverflowError(message, kind) from exc
                if kind not in RETRYABLE or attempt == target.max_retries:
                    raise ModelCallError(message, kind) from exc
                delay = self._backoff(attempt, exc)
                if kind is ErrorClass.CONNECTION:
                    delay = min(delay, MAX_CONNECT_BACKOFF)
            # A stream that failed mid-way stays open in a reference cycle inside
            # litellm; if the collector finalizes it during the next request, while this
            # thread holds httpcore's pool lock, the thread deadlocks (encode/httpcore#990).
            # Collect it now, between requests.
            gc.collect()
            self._sleep(delay)
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        """Jittered exponential backoff; a server's Retry-After wins when it says more."""
        base = self.settings.retry_backoff * (2 ** attempt)
        delay = base / 2 + random.uniform(0, base / 2)
        retry_after = _retry_after(exc)
        return min(max(delay, retry_after or 0.0), 60.0)

    def _call(self, target: Target, messages: list[dict[str, Any]],
              tools: list[dict[str, Any]] | None, stream: bool, callbacks: StreamCallbacks,
              params: dict[str, Any]) -> ModelReply:
        litellm = import_litellm()
        common = {"model": target.model, "api_base": target.api_base, "api_key": target.api_key,
                  "timeout": target.timeout, **target.extra, **params}
        if target.api_mode == "responses":
            return self._call_responses(litellm, common, messages, tools, stream, callbacks)
        if target.api_mode == "anthropic_messages":
            messages = with_cache_breakpoints(messages)
        kwargs: dict[str, Any] = {**common, "messages": messages, "num_retries": 0}
        if tools:
            kwargs["tools"] = tools
        if stream:
            kwargs |= {"stream": True, "stream_options": {"include_usage": True}}
            return _read_chat_stream(litellm, litellm.completion(**kwargs), target.model,
                                     callbacks)
        response = litellm.completion(**kwargs)
        choice = response.choices[0]
        message = choice.message
        calls = tuple(ToolCall(c.id, c.function.name, c.function.arguments or "")
                      for c in message.tool_calls or [])
        return ModelReply(message.content or "", calls, getattr(message, "reasoning_content", None),
                          choice.finish_reason, _usage(litellm, target.model, response.usage),
                          target.model)

    def _call_responses(self, litellm: Any, common: dict[str, Any],
                        messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                        stream: bool, callbacks: StreamCallbacks) -> ModelReply:
        instructions, items = responses_api.to_responses_input(messages)
        kwargs = {**common, "input": items, "instructions": instructions,
                  "tools": responses_api.to_responses_tools(tools)}
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        if stream:
            response = responses_api.consume_stream(litellm.responses(**kwargs, stream=True),
                                                    callbacks)
            if response is None:
                _raise_if_cancelled(callbacks)
                raise ModelCallError(f"{common['model']}: stream ended without a response",
                                     ErrorClass.SERVER_ERROR)
        else:
            response = litellm.responses(**kwargs)
        text, calls, reasoning = responses_api.parse_output(response.output)
        status = getattr(response, "status", None)
        return ModelReply(text, tuple(calls), reasoning, "tool_calls" if calls else status,
                          _usage(litellm, common["model"], getattr(response, "usage", None)),
                          common["model"])


def _read_chat_stream(litellm: Any, chunks: Any, model: str,
                      callbacks: StreamCallbacks) -> ModelReply:
    """Assemble a streamed chat completion, reporting deltas as they arrive."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage: Any = None
    for chunk in chunks:
        _raise_if_cancelled(callbacks)
        usage = getattr(chunk, "usage", None) or usage
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        finish = choice.finish_reason or finish
        if delta.content:
            text.append(delta.content)
            if callbacks.on_text:
                callbacks.on_text(delta.content)
        thought = getattr(delta, "reasoning_content", None)
        if thought:
            reasoning.append(thought)
            if callbacks.on_reasoning:
                callbacks.on_reasoning(thought)
        for call in delta.tool_calls or []:
            _merge_tool_delta(calls, call, callbacks)
    if finish is None:
        raise ModelCallError(f"{model}: stream ended before the reply finished",
                             ErrorClass.SERVER_ERROR)
    tool_calls = tuple(ToolCall(c["id"], c["name"], c["arguments"])
                       for _, c in sorted(calls.items()))
    return ModelReply("".join(text), tool_calls, "".join(reasoning) or None, finish,
                      _usage(litellm, model, usage), model)


def _merge_tool_delta(calls: dict[int, dict[str, str]], delta: Any,
                      callbacks: StreamCallbacks) -> None:
    index = getattr(delta, "index", None) or 0
    entry = calls.get(index)
    if entry is None:
        entry = calls[index] = {"id": "", "name": "", "arguments": ""}
    if getattr(delta, "id", None):
        entry["id"] = delta.id
    function = getattr(delta, "function", None)
    if function is not None:
        if function.name and not entry["name"]:
            entry["name"] = function.name
            if callbacks.on_tool_call:
                callbacks.on_tool_call(index, function.name)
        entry["arguments"] += function.arguments or ""


def _usage(litellm: Any, model: str, usage: Any) -> Usage:
    """Tokens and cost from a litellm usage object; cost None when pricing is unknown."""
    if usage is None:
        return Usage()

    def number(obj: Any, *names: str) -> int:
        for name in names:
            value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
            if isinstance(value, int | float):
                return int(value)
        return 0

    prompt_details = getattr(usage, "prompt_tokens_details", None) \
        or getattr(usage, "input_tokens_details", None)
    output_details = getattr(usage, "completion_tokens_details", None) \
        or getattr(usage, "output_tokens_details", None)
    result = Usage(
        input_tokens=number(usage, "prompt_tokens", "input_tokens"),
        output_tokens=number(usage, "completion_tokens", "output_tokens"),
        cache_read_tokens=number(usage, "cache_read_input_tokens")
        or (number(prompt_details, "cached_tokens") if prompt_details else 0),
        cache_write_tokens=number(usage, "cache_creation_input_tokens"),
        reasoning_tokens=number(output_details, "reasoning_tokens") if output_details else 0,
    )
    return Usage(result.input_tokens, result.output_tokens, result.cache_read_tokens,
                 result.cache_write_tokens, result.reasoning_tokens, _cost(litellm, model, result))


def _cost(litellm: Any, model: str, usage: Usage) -> float | None:
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=usage.input_tokens,
            completion_tokens=usage.output_tokens,
            cache_read_input_tokens=usage.cache_read_tokens,
            cache_creation_input_tokens=usage.cache_write_tokens)
    except Exception:  # noqa: BLE001 - litellm raises for models it has no price for
        return None
    return float(prompt + completion)


def _raise_if_cancelled(callbacks: StreamCallbacks) -> None:
    if callbacks.cancelled and callbacks.cancelled():
        raise CallCancelledError("model call interrupted")


def _retry_after(exc: BaseException) -> float | None:
    # litellm keeps the provider's headers here, not on ``exc.response``
    headers = getattr(exc, "litellm_response_headers", None) or {}
    value = headers.get("retry-after")
    try:
        return float(value) if value else None
    except (TypeError, ValueError):
        return None
