"""The model client: api modes, streaming, usage, cost, retries, fallbacks.

Calls go through litellm, except plain chat completions at an OpenAI-compatible
endpoint of the user's own, which ``openai_wire`` speaks directly (litellm's import is
most of a process's start-up and memory). litellm is imported on first use, never at
start-up, and with the local cost map so that importing it never fetches anything
from the network.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from hermes.config.schema import FallbackConfig, ProviderConfig
from hermes.importing import hidden_during_import
from hermes.models import chat_stream, model_data, openai_wire, responses_api
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
                 sleep: Callable[[float], None] = time.sleep,
                 wire: openai_wire.ChatWire | None = None):
        self.settings = settings
        self.model = settings.model
        self._sleep = sleep
        self._wire = wire or openai_wire.ChatWire()
        self._entries: dict[str, dict[str, Any] | None] = {}
        self._entries_lock = threading.Lock()

    def with_model(self, name: str) -> LiteLLMClient:
        return LiteLLMClient(self.settings.model_copy(update={"model": name}),
                             sleep=self._sleep)

    def takes_images(self) -> bool:
        """``provider.vision`` when set, else litellm's model data (an unknown model
        is taken to read no images)."""
        if self.settings.vision is not None:
            return self.settings.vision
        primary = self.targets()[0]
        if self._direct(primary, {}):
            return bool((self._entry(primary.model) or {}).get("supports_vision"))
        litellm = import_litellm()
        try:
            return bool(litellm.supports_vision(model=self.litellm_model))
        except Exception:  # noqa: BLE001 - litellm raises many kinds for unknown models
            return False

    def input_window(self) -> int | None:
        """From the model data for an endpoint spoken to directly; else from litellm's
        model info (its provider-aware look-up), routed name first."""
        primary = self.targets()[0]
        if self._direct(primary, {}):
            return model_data.input_window(self._entry(primary.model))
        litellm = import_litellm()
        for name in (self.litellm_model, self.model):
            try:
                info = litellm.get_model_info(name)
            except Exception:  # noqa: BLE001 - litellm raises for models it has not mapped
                continue
            window = info.get("max_input_tokens") or info.get("max_tokens")
            if isinstance(window, int) and window > 0:
                return window
        return None

    def needs_litellm(self) -> bool:
        """Whether a call may go through litellm (some target is not spoken directly)."""
        return not all(self._direct(t, {}) for t in self.targets())

    def _direct(self, target: Target, params: dict[str, Any]) -> bool:
        return openai_wire.serves(target.model, target.api_mode, target.api_base,
                                  {**target.extra, **params})

    def _entry(self, model: str) -> dict[str, Any] | None:
        """The model data entry of a direct target's model (read once per model)."""
        with self._entries_lock:
            if model not in self._entries:
                bare = model.removeprefix("openai/")
                self._entries[model] = model_data.model_entry(
                    model_data.candidate_names("openai", bare))
            return self._entries[model]

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
        if self._direct(target, params):
            reply = self._wire.complete(
                model=target.model, api_base=target.api_base or "", api_key=target.api_key,
                timeout=target.timeout, messages=messages, tools=tools, stream=stream,
                callbacks=callbacks, params={**target.extra, **params})
            cost = model_data.cost_usd(self._entry(target.model), reply.usage)
            return replace(reply, usage=replace(reply.usage, cost_usd=cost))
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
                chat_stream.raise_if_cancelled(callbacks)
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
    try:
        return chat_stream.assemble(chunks, model, callbacks,
                                    lambda usage: _usage(litellm, model, usage))
    except chat_stream.StreamEndedEarly as exc:
        raise ModelCallError(str(exc), ErrorClass.SERVER_ERROR) from None


def _usage(litellm: Any, model: str, usage: Any) -> Usage:
    """Tokens and cost from a litellm usage object; cost None when pricing is unknown."""
    if usage is None:
        return Usage()
    tokens = chat_stream.usage_of(usage)
    return replace(tokens, cost_usd=_cost(litellm, model, tokens))


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


def _retry_after(exc: BaseException) -> float | None:
    # litellm keeps the provider's headers here, not on ``exc.response``
    headers = getattr(exc, "litellm_response_headers", None) \
        or getattr(exc, "response_headers", None) or {}
    value = headers.get("retry-after")
    try:
        return float(value) if value else None
    except (TypeError, ValueError):
        return None
