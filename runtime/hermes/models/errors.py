"""Classify provider failures so the client knows whether to retry or fall back.

litellm raises OpenAI-style exception classes for every provider; they are
classified here by type name and status code (never by importing litellm), so
this module is cheap and testable without the network.
"""

from __future__ import annotations

import re
from enum import StrEnum

from hermes.errors import ProviderError


class ErrorClass(StrEnum):
    AUTH = "auth"
    BILLING = "billing"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    """The endpoint could not be reached at all (refused, unknown host, no route)."""
    CONTEXT_OVERFLOW = "context_overflow"
    MODEL_NOT_FOUND = "model_not_found"
    FORMAT_ERROR = "format_error"
    UNKNOWN = "unknown"


RETRYABLE = frozenset({ErrorClass.RATE_LIMIT, ErrorClass.OVERLOADED, ErrorClass.SERVER_ERROR,
                       ErrorClass.TIMEOUT, ErrorClass.CONNECTION})
MAX_CONNECT_BACKOFF = 0.25
"""Seconds between retries of an endpoint that could not be reached: a refused
connection is seldom fixed by waiting, so fail fast (at most the configured retries)."""
_CONNECT_FAILURES = frozenset({"ConnectError", "ConnectTimeout", "ConnectionRefusedError",
                               "gaierror"})
"""httpx/socket errors raised while connecting, found in the ``__cause__`` chain under
litellm's generic ``InternalServerError: Connection error.``"""
_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")

_BY_TYPE = {
    "AuthenticationError": ErrorClass.AUTH,
    "PermissionDeniedError": ErrorClass.AUTH,
    "RateLimitError": ErrorClass.RATE_LIMIT,
    "ServiceUnavailableError": ErrorClass.OVERLOADED,
    "InternalServerError": ErrorClass.SERVER_ERROR,
    "APIConnectionError": ErrorClass.SERVER_ERROR,
    "Timeout": ErrorClass.TIMEOUT,
    "APITimeoutError": ErrorClass.TIMEOUT,
    "ContextWindowExceededError": ErrorClass.CONTEXT_OVERFLOW,
    "NotFoundError": ErrorClass.MODEL_NOT_FOUND,
    "BadRequestError": ErrorClass.FORMAT_ERROR,
    "UnprocessableEntityError": ErrorClass.FORMAT_ERROR,
    "JSONSchemaValidationError": ErrorClass.FORMAT_ERROR,
    # httpx errors that escape litellm unmapped (e.g. a Responses stream cut short)
    "TimeoutException": ErrorClass.TIMEOUT,
    "TransportError": ErrorClass.SERVER_ERROR,
}
_BY_STATUS = {401: ErrorClass.AUTH, 403: ErrorClass.AUTH, 402: ErrorClass.BILLING,
              404: ErrorClass.MODEL_NOT_FOUND, 408: ErrorClass.TIMEOUT,
              413: ErrorClass.CONTEXT_OVERFLOW, 429: ErrorClass.RATE_LIMIT,
              500: ErrorClass.SERVER_ERROR, 502: ErrorClass.SERVER_ERROR,
              503: ErrorClass.OVERLOADED, 504: ErrorClass.TIMEOUT, 529: ErrorClass.OVERLOADED}


def classify(exc: BaseException) -> ErrorClass:
    """The class of a litellm/httpx exception (subclasses checked through the MRO)."""
    text = str(exc).lower()
    if "context" in text and ("length" in text or "window" in text or "too long" in text):
        return ErrorClass.CONTEXT_OVERFLOW
    if "insufficient" in text and ("quota" in text or "credit" in text or "balance" in text):
        return ErrorClass.BILLING
    if connect_failure(exc) is not None:  # litellm reports these as status 500
        return ErrorClass.CONNECTION
    status = getattr(exc, "status_code", None)
    if status in _BY_STATUS:  # litellm wraps e.g. 402 and 529 in generic classes
        return _BY_STATUS[status]
    for cls in type(exc).__mro__:
        if cls.__name__ in _BY_TYPE:
            return _BY_TYPE[cls.__name__]
    if status in (400, 422):  # after the types: litellm's context overflow is a 400 too
        return ErrorClass.FORMAT_ERROR
    return ErrorClass.UNKNOWN


def connect_failure(exc: BaseException) -> str | None:
    """Why connecting failed (e.g. ``connection refused``) if ``exc`` or an exception it
    was raised from is a connect failure; else None."""
    found: BaseException | None = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if any(cls.__name__ in _CONNECT_FAILURES for cls in type(current).__mro__):
            found = current  # the deepest one says it best: "[Errno 111] Connection refused"
        current = current.__cause__ or current.__context__
    if found is None:
        return None
    reason = _ERRNO.sub("", first_line(found))
    return reason[:1].lower() + reason[1:]


def failure_message(exc: BaseException, kind: ErrorClass, *, model: str,
                    api_base: str | None, config_key: str) -> str:
    """One line for a failed call. An endpoint that could not be reached is named, with
    the setting it comes from (``config_key``) and how to check it."""
    reason = connect_failure(exc) if kind is ErrorClass.CONNECTION else None
    if reason is None:
        return f"{model}: {kind.value}: {first_line(exc)}"
    if api_base is None:  # the provider's own endpoint
        return (f"cannot reach the model endpoint for {model} ({reason}) — check the "
                "network and run `hermes doctor`")
    return (f"cannot reach the model endpoint {api_base} ({reason}) — check "
            f"`hermes config get {config_key}` and run `hermes doctor`")


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (at most 300 characters), else its type."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


class ModelCallError(ProviderError):
    """A model call failed for good (after retries and fallbacks)."""

    def __init__(self, message: str, error_class: ErrorClass):
        super().__init__(message)
        self.error_class = error_class


class ContextOverflowError(ModelCallError):
    """The conversation no longer fits the model's window: compress and retry."""


class CallCancelledError(ProviderError):
    """The user interrupted the call (Ctrl-C)."""
