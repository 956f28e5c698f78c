"""Classify provider failures so the client knows whether to retry or fall back.

litellm raises OpenAI-style exception classes for every provider; they are
classified here by type name and status code (never by importing litellm), so
this module is cheap and testable without the network.
"""

from __future__ import annotations

from enum import StrEnum

from hermes.errors import ProviderError


class ErrorClass(StrEnum):
    AUTH = "auth"
    BILLING = "billing"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONTEXT_OVERFLOW = "context_overflow"
    MODEL_NOT_FOUND = "model_not_found"
    FORMAT_ERROR = "format_error"
    UNKNOWN = "unknown"


RETRYABLE = frozenset({ErrorClass.RATE_LIMIT, ErrorClass.OVERLOADED, ErrorClass.SERVER_ERROR,
                       ErrorClass.TIMEOUT})

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
    status = getattr(exc, "status_code", None)
    if status in _BY_STATUS:  # litellm wraps e.g. 402 and 529 in generic classes
        return _BY_STATUS[status]
    for cls in type(exc).__mro__:
        if cls.__name__ in _BY_TYPE:
            return _BY_TYPE[cls.__name__]
    return ErrorClass.UNKNOWN


class ModelCallError(ProviderError):
    """A model call failed for good (after retries and fallbacks)."""

    def __init__(self, message: str, error_class: ErrorClass):
        super().__init__(message)
        self.error_class = error_class


class ContextOverflowError(ModelCallError):
    """The conversation no longer fits the model's window: compress and retry."""


class CallCancelledError(ProviderError):
    """The user interrupted the call (Ctrl-C)."""
